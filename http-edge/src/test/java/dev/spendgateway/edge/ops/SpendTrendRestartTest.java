package dev.spendgateway.edge.ops;

import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.JSON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.Usage;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The spend trend survives a restart: a second gateway on the same journal reads the last hours
 * back and shows the same spend in this hour as {@code /usage} (and not twice).
 */
class SpendTrendRestartTest {
  private static final String TOKEN = "gw-e2e-token-7Q2x9";
  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite(
          "e2e-test.conf", "trend", SimConfig.defaults().withUsage(new Usage(40, 25, 0, 0, 0)));

  @Test
  void aRestartedGatewayRebuildsTheTrendFromTheJournal() throws Exception {
    Path dataDir = Files.createTempDirectory("trend-journal");
    try {
      Map<String, Object> sameJournal = Map.of("gateway.data-dir", dataDir.toString());
      BigDecimal spentBefore;
      try (TestGateway first = TestGateway.start(SUITE, "first", sameJournal)) {
        Brand brand = Brand.fresh("trend");
        for (int i = 0; i < 3; i++) {
          assertEquals(
              200,
              first
                  .send(
                      first
                          .postJson(
                              ANTHROPIC,
                              "{\"model\":\"claude-haiku-5-5\",\"max_tokens\":64,"
                                  + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                              brand)
                          .build())
                  .statusCode());
        }
        first.awaitSettled(brand.id());
        spentBefore = last24Hours(first);
        assertTrue(
            spentBefore.signum() > 0, "the first gateway counted its spend as it was written");
      }
      try (TestGateway second = TestGateway.start(SUITE, "second", sameJournal)) {
        JsonNode data =
            Eventually.until(
                "the second gateway's spend series rebuild finishes",
                java.time.Duration.ofSeconds(10),
                () -> opsData(second),
                seen -> seen.path("spendSeriesComplete").asBoolean());
        assertTrue(data.path("spendSeriesComplete").asBoolean(), "the rebuild finished");
        assertEquals(0, spentBefore.compareTo(last24Hours(second)), "read back once, not twice");
      }
    } finally {
      try (Stream<Path> files = Files.walk(dataDir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static JsonNode opsData(TestGateway gw) throws Exception {
    var r = gw.send(gw.get("/ops/data").header("x-api-key", TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  /** The whole 24 h series (robust to the test crossing an hour boundary). */
  private static BigDecimal last24Hours(TestGateway gw) throws Exception {
    BigDecimal sum = BigDecimal.ZERO;
    for (JsonNode hour : opsData(gw).get("spendPerHour")) {
      sum = sum.add(new BigDecimal(hour.get("usd").asText()));
    }
    return sum;
  }
}
