package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.GatewayProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's shell examples, pasted as a new user pastes them after {@code bin/gateway --demo}:
 * the {@code bash} blocks of "Try it", "The ledger API" and "Media jobs (video)", run in order by
 * bash against a demo gateway started from the same working directory (only the port differs: tests
 * never use a fixed one). Every curl must get a 2xx; a README example that stops working fails this
 * test.
 */
class ReadmeExamplesIT {
  private static final String MEDIA_MARKER = "==== media examples ====";

  @TempDir Path workDir;

  @Test
  void theReadmeShellExamplesRunAgainstADemoGateway() throws Exception {
    Path root = GatewayProcess.root();
    String readme = Files.readString(root.resolve("README.md"), StandardCharsets.UTF_8);
    List<String> blocks = new ArrayList<>();
    blocks.addAll(bashBlocks(section(readme, "## Try it")));
    blocks.addAll(bashBlocks(section(readme, "## The ledger API")));
    assertTrue(blocks.size() >= 3, "the README has its examples: " + blocks.size());
    List<String> media = bashBlocks(section(readme, "## Media jobs (video)"));
    assertTrue(media.size() >= 1, "the README has its media example");
    // The media example runs after the others, behind a marker: its job JSON carries the media
    // API's own "error": null, so it gets checks of its own.
    List<String> script = new ArrayList<>(blocks);
    script.add("echo " + MEDIA_MARKER);
    script.addAll(media);

    String all =
        onDemo(
            workDir,
            port ->
                String.join("\n", script)
                    .replace("127.0.0.1:8787", "127.0.0.1:" + port)
                    .replace("localhost:8787", "localhost:" + port));
    int marker = all.indexOf(MEDIA_MARKER);
    assertTrue(marker >= 0, all);
    String printed = all.substring(0, marker);
    String videos = all.substring(marker);
    assertTrue(videos.contains("\"object\":\"video\""), "the clip was submitted: " + videos);
    assertTrue(videos.contains("\"status\":\"completed\""), "the clip completed: " + videos);
    assertFalse(videos.contains("\"error\":{"), videos);
    // The simulator's clip is 64 KiB; ls -l prints its size.
    assertTrue(videos.contains(" 65536 "), "the clip was downloaded whole: " + videos);
    // 4 s x $0.10 settled on studio's daily cap.
    assertTrue(videos.contains("\"spentUsd\":0.4,"), "the clip's $0.40 settled: " + videos);
    assertTrue(
        printed.contains("\"type\":\"message\""),
        "Claude answered through the gateway: " + printed);
    assertTrue(printed.contains("\"openReservations\""), "/usage answered: " + printed);
    assertTrue(
        printed.contains("\"status\":\"settled\""), "the ledger API settled r-1: " + printed);
    assertFalse(printed.contains("\"error\""), printed);
  }

  /**
   * Starts a demo gateway in {@code workDir} (its data in {@code data/} there), runs the script
   * {@code script} makes for its port with bash in the same directory, with none of the caller's
   * GATEWAY_ variables, and returns what it printed once every command succeeded. A failed curl
   * fails the script (the docs' plain {@code curl -s} would print the error and go on).
   */
  static String onDemo(Path workDir, IntFunction<String> script) throws Exception {
    int port = GatewayProcess.freePort();
    try (GatewayProcess gateway =
        GatewayProcess.launch()
            .args("--demo")
            .port(port)
            .workDir(workDir)
            .start(workDir.resolve("gateway.txt"))) {
      gateway.awaitReady(Duration.ofSeconds(300));
      Path file = workDir.resolve("examples.sh");
      Files.writeString(
          file,
          "set -euo pipefail\n"
              + "curl() { command curl --fail-with-body --max-time 30 \"$@\"; echo; }\n"
              + script.apply(port));
      Path shellOut = workDir.resolve("shell.txt");
      ProcessBuilder shell =
          new ProcessBuilder("bash", file.toString())
              .directory(workDir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(shellOut.toFile());
      shell.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
      // Each bin/gateway-admin in the examples is a JVM reading a journal of a few rows: the JIT's
      // first tier and the serial collector start it about a quarter faster (~2.9 s against
      // ~3.5 s here). JAVA_OPTS is the script's documented knob; what the commands do is unchanged.
      shell.environment().put("JAVA_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
      Process run = shell.start();
      assertTrue(run.waitFor(240, TimeUnit.SECONDS), "the examples finish");
      String printed = Files.readString(shellOut, StandardCharsets.UTF_8);
      assertEquals(0, run.exitValue(), "every example works:\n" + printed);
      return printed;
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
}
