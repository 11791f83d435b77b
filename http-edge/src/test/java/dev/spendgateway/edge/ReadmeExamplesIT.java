package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's shell examples, pasted as a new user pastes them after {@code bin/gateway --demo}:
 * the {@code bash} blocks of "Try it" and "The ledger API", run in order by bash against a demo
 * gateway started from the same working directory (only the port differs: tests never use a fixed
 * one). Every curl must get a 2xx; a README example that stops working fails this test.
 */
class ReadmeExamplesIT {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @TempDir Path workDir;

  @Test
  void theReadmeShellExamplesRunAgainstADemoGateway() throws Exception {
    Path root = root();
    String readme = Files.readString(root.resolve("README.md"), StandardCharsets.UTF_8);
    List<String> blocks = new ArrayList<>();
    blocks.addAll(bashBlocks(section(readme, "## Try it")));
    blocks.addAll(bashBlocks(section(readme, "## The ledger API")));
    assertTrue(blocks.size() >= 3, "the README has its examples: " + blocks.size());

    int port = freePort();
    Path out = workDir.resolve("gateway.txt");
    ProcessBuilder pb = new ProcessBuilder(java(), "-Dlogback.configurationFile=" + root.resolve("conf/logback.xml"),
        "-cp", root.resolve("conf") + File.pathSeparator + jar(), "dev.spendgateway.edge.GatewayMain", "--demo")
        .directory(workDir.toFile()).redirectErrorStream(true).redirectOutput(out.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
    pb.environment().put("GATEWAY_PORT", Integer.toString(port));
    Process gateway = pb.start();
    try {
      waitReady("http://127.0.0.1:" + port, gateway, out);
      String script = "set -euo pipefail\n"
          // A failed call fails the script (the README's plain `curl -s` would print the error and go on).
          + "curl() { command curl --fail-with-body --max-time 30 \"$@\"; echo; }\n"
          + String.join("\n", blocks).replace("127.0.0.1:8787", "127.0.0.1:" + port)
              .replace("localhost:8787", "localhost:" + port);
      Path file = workDir.resolve("readme-examples.sh");
      Files.writeString(file, script);
      Path shellOut = workDir.resolve("shell.txt");
      ProcessBuilder shell = new ProcessBuilder("bash", file.toString()).directory(workDir.toFile())
          .redirectErrorStream(true).redirectOutput(shellOut.toFile());
      shell.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
      Process run = shell.start();
      assertTrue(run.waitFor(180, TimeUnit.SECONDS), "the examples finish");
      String printed = Files.readString(shellOut, StandardCharsets.UTF_8);
      assertEquals(0, run.exitValue(), "every README example works:\n" + printed);
      assertTrue(printed.contains("\"type\":\"message\""), "Claude answered through the gateway: " + printed);
      assertTrue(printed.contains("\"openReservations\""), "/usage answered: " + printed);
      assertTrue(printed.contains("\"status\":\"settled\""), "the ledger API settled r-1: " + printed);
      assertFalse(printed.contains("\"error\""), printed);
    } finally {
      gateway.destroy();
      if (!gateway.waitFor(60, TimeUnit.SECONDS)) {
        gateway.destroyForcibly();
      }
    }
  }

  /** The text from {@code heading} to the next {@code ## } heading. */
  static String section(String markdown, String heading) {
    int start = markdown.indexOf("\n" + heading + "\n");
    assertTrue(start >= 0, "README has a section " + heading);
    int end = markdown.indexOf("\n## ", start + heading.length() + 1);
    return markdown.substring(start, end < 0 ? markdown.length() : end);
  }

  static List<String> bashBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    Matcher m = Pattern.compile("(?s)```bash\\n(.*?)```").matcher(markdown);
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }

  private static Path root() {
    return Path.of(jar()).getParent().getParent().getParent();
  }

  private static String jar() {
    return Path.of(System.getProperty("gateway.jar", "target/gateway.jar")).toAbsolutePath().toString();
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static void waitReady(String base, Process p, Path out) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(300).toNanos();
    while (System.nanoTime() < deadline) {
      assertTrue(p.isAlive(), "gateway exited early: " + Files.readString(out));
      try {
        if (HTTP.send(HttpRequest.newBuilder(URI.create(base + "/readyz")).timeout(Duration.ofSeconds(5)).build(),
            HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // keep polling
      }
      Thread.sleep(200);
    }
    throw new AssertionError("never ready: " + Files.readString(out));
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
