package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.GatewayProcess;
import dev.spendgateway.sim.ProviderSimulator;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A gateway process killed with {@code kill -9} while video jobs run: after the restart on the same
 * journal the jobs are still held at their worst case (and still count against the account's
 * limit), and the restarted gateway's poll settles them at their billed seconds when they complete.
 * The media provider (the simulator) runs in the test JVM, so it outlives the gateway as a real
 * provider would.
 */
class MediaKillRestartIT {
  private static final String TOKEN = "media-kill-it-token-5Rw9";
  private static final String CLIP =
      "{\"model\":\"sora-2\",\"prompt\":\"a lighthouse at dusk\",\"seconds\":\"8\",\"size\":\"720x1280\"}";
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(2))
          .build();

  @TempDir Path dataDir;

  private GatewayProcess.Launch gateway(ProviderSimulator sim, int port) {
    return GatewayProcess.launch()
        .jvm("-Dmedia.poll-interval=200ms")
        .port(port)
        .dataDir(dataDir)
        .token(TOKEN)
        .env("OPENAI_BASE_URL", sim.baseUrl())
        .env("ANTHROPIC_BASE_URL", sim.baseUrl())
        .env("OPENAI_API_KEY", "sk-openai-kill-it-key")
        .env("ANTHROPIC_API_KEY", "sk-ant-kill-it-key")
        .env("MEDIA_BASE_URL", sim.baseUrl())
        .env("MEDIA_API_KEY", "sk-media-kill-it-key");
  }

  @Test
  void jobsRunningAtAKill9AreHeldAfterTheRestartAndSettledWhenTheyComplete() throws Exception {
    try (ProviderSimulator sim = ProviderSimulator.start(SimConfig.defaults())) {
      // Longer than any kill, restart and look takes; the test ends them when it has looked.
      sim.setMedia(Duration.ofMinutes(10), Duration.ofSeconds(1), false, 5, 10);
      int port = GatewayProcess.freePort();
      String base = "http://127.0.0.1:" + port;
      try (GatewayProcess first = gateway(sim, port).start(dataDir.resolve("first.txt"))) {
        first.awaitReady(Duration.ofSeconds(120));
        for (int i = 0; i < 3; i++) {
          HttpResponse<String> r = submit(base);
          assertEquals(200, r.statusCode(), r.body());
        }
        assertEquals(0, new BigDecimal("2.40").compareTo(brandDaily(base, "reservedUsd")));
        first.process.destroyForcibly(); // SIGKILL: no shutdown hook, no drain
        assertTrue(first.process.waitFor(30, TimeUnit.SECONDS), "killed");
      }
      assertEquals(3, sim.received(SimRoute.MEDIA_CREATE).size());

      try (GatewayProcess second = gateway(sim, port).start(dataDir.resolve("second.txt"))) {
        second.awaitReady(Duration.ofSeconds(120));
        // Held after the restart: nothing lost, nothing settled early.
        JsonNode held = usage(base);
        assertEquals(3, held.get("openReservations").asInt(), held.toString());
        assertEquals(0, new BigDecimal("2.40").compareTo(brandDaily(base, "reservedUsd")));
        assertEquals(0, BigDecimal.ZERO.compareTo(brandDaily(base, "spentUsd")));

        // Settled by the restarted gateway's poll once they complete: 3 x 8 s x $0.10.
        assertEquals(3, sim.finishMediaJobs(), "the three jobs were still running");
        JsonNode settled =
            Eventually.until(
                "the restarted gateway settles the jobs",
                Duration.ofSeconds(90),
                () -> usage(base),
                u -> u.get("openReservations").asInt() == 0);
        assertEquals(
            0, new BigDecimal("2.40").compareTo(brandDaily(base, "spentUsd")), settled.toString());
        assertEquals(0, BigDecimal.ZERO.compareTo(brandDaily(base, "reservedUsd")));
        assertEquals(3, sim.received(SimRoute.MEDIA_CREATE).size(), "nothing submitted again");
      }
    }
  }

  private static HttpResponse<String> submit(String base) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(base + "/media/v1/videos"))
            .timeout(Duration.ofSeconds(30))
            .header("x-api-key", TOKEN)
            .header("content-type", "application/json")
            .header("x-spend-lane", "app")
            .header("x-spend-brand", "k9")
            .header("x-spend-brand-daily-usd", "5")
            .header("x-spend-brand-monthly-usd", "50")
            .POST(HttpRequest.BodyPublishers.ofString(CLIP))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode usage(String base) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(base + "/usage?brand=k9"))
                .timeout(Duration.ofSeconds(10))
                .header("x-api-key", TOKEN)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  private static BigDecimal brandDaily(String base, String field) throws Exception {
    for (JsonNode row : usage(base).get("caps")) {
      if (row.get("cap").asText().equals("brand_daily")) {
        return row.get(field).decimalValue();
      }
    }
    throw new AssertionError("no brand_daily cap");
  }
}
