package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The runnable jar as a standalone process: prints its URL, serves, can be scripted, stops on
 * SIGTERM.
 */
class ProviderSimProcessIT {

  @Test
  void standaloneJarServesBothApisAndStopsOnSigterm() throws Exception {
    Path jar =
        Path.of(
            System.getProperty("provider-sim.jar", "target/provider-sim-0.1.0-SNAPSHOT-all.jar"));
    assertTrue(Files.exists(jar), "shaded jar missing: " + jar);
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process p =
        new ProcessBuilder(List.of(java.toString(), "-jar", jar.toString(), "--port", "0"))
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      assertNotNull(line, "no ready line");
      assertTrue(line.startsWith("provider-sim listening on http://127.0.0.1:"), line);
      String baseUrl = line.substring("provider-sim listening on ".length()).trim();

      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpResponse<String> scripted =
          http.send(
              HttpRequest.newBuilder(URI.create(baseUrl + "/_sim/script"))
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"route\":\"anthropic.messages\",\"fault\":{\"kind\":\"rateLimited\",\"retryAfter\":4}}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, scripted.statusCode());
      HttpResponse<String> limited =
          http.send(
              HttpRequest.newBuilder(URI.create(baseUrl + "/v1/messages"))
                  .POST(HttpRequest.BodyPublishers.ofString("{}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(429, limited.statusCode());
      assertEquals("4", limited.headers().firstValue("retry-after").orElseThrow());
      HttpResponse<String> chat =
          http.send(
              HttpRequest.newBuilder(URI.create(baseUrl + "/v1/chat/completions"))
                  .POST(HttpRequest.BodyPublishers.ofString("{}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, chat.statusCode());
      assertTrue(chat.body().contains("chat.completion"));

      p.destroy(); // SIGTERM
      assertTrue(p.waitFor(15, TimeUnit.SECONDS), "did not stop on SIGTERM");
      // 143 = killed by SIGTERM after the shutdown hook ran; the JVM reports it so.
      assertTrue(p.exitValue() == 0 || p.exitValue() == 143, "exit " + p.exitValue());
    } finally {
      p.destroyForcibly();
    }
  }
}
