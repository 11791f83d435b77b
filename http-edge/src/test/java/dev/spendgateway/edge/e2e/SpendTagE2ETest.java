package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.E2eGateway.TOKEN;
import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The workflow tag end to end: {@code x-spend-tag} is checked on every provider route and the
 * router, journaled with the reservation, grouped by {@code gateway-admin report --by tag} from the
 * running gateway's journal, and named on {@code /metrics} only when the conf lists it. The model
 * and provider of each attempt are journaled too, and reported with totals equal to the ledger's.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpendTagE2ETest {
  private static final String ROUTER = "/v1/chat/completions";

  private TestGateway gw;

  @BeforeAll
  void start() throws Exception {
    gw =
        E2eGateway.start(
            "spend-tag", Map.of("gateway.spend-tags.metric-tags", List.of("onboarding")));
  }

  @AfterAll
  void stop() throws Exception {
    gw.close();
  }

  @BeforeEach
  void resetSimulator() {
    gw.sim.reset();
  }

  private static String bodyFor(String path) {
    return E2eGateway.smallChat(path);
  }

  private HttpResponse<String> call(String path, Brand brand, String tag) throws Exception {
    var request = gw.postJson(path, bodyFor(path), brand);
    if (tag != null) {
      request.header("x-spend-tag", tag);
    }
    return gw.send(request.build());
  }

  @ParameterizedTest(name = "{0} with x-spend-tag ''{1}'' is a 400 naming it, nothing sent")
  @CsvSource({
    "/openai/v1/chat/completions, 'a,b'",
    "/anthropic/v1/messages,      a:b",
    "/v1/chat/completions,        a/b",
    "/v1/chat/completions,        tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt",
  })
  void aMalformedTagIsRefusedOnEveryRouteBeforeAnythingIsReserved(String path, String tag)
      throws Exception {
    Brand brand = Brand.fresh("tag-bad");
    HttpResponse<String> r = call(path, brand, tag);
    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().contains("x-spend-tag"), r.body());
    assertTrue(gw.sim.received().isEmpty(), "nothing reached a provider");
    var usage = gw.usage(brand.id());
    assertEquals(0, usage.get("openReservations").asInt(), "nothing was reserved");
    for (var row : usage.get("caps")) {
      assertTrue(!brand.id().equals(row.path("subject").asText()), "the brand has no books");
    }
  }

  @Test
  void aTaggedCallIsJournaledReportedByTagAndCountedUnderABoundedLabel() throws Exception {
    Brand brand = Brand.fresh("tagged");
    assertEquals(200, call(CHAT, brand, "onboarding").statusCode());
    assertEquals(200, call(ANTHROPIC, brand, "support.triage").statusCode());
    assertEquals(200, call(ROUTER, brand, "support.triage").statusCode());
    assertEquals(200, call(CHAT, brand, null).statusCode());
    gw.awaitSettled(brand.id());

    // The report reads the journal of the running gateway.
    List<String> lines = E2eGateway.reportCsv(gw, "brand,tag");
    String out = String.join("\n", lines);
    List<String> mine = lines.stream().filter(l -> l.startsWith(brand.id() + ",")).toList();
    assertEquals(3, mine.size(), out);
    // brand,tag,calls,...: the untagged call is its own group (empty tag), sorted first
    assertTrue(mine.get(0).startsWith(brand.id() + ",,1,"), out.toString());
    assertTrue(mine.get(1).startsWith(brand.id() + ",onboarding,1,"), out.toString());
    assertTrue(mine.get(2).startsWith(brand.id() + ",support.triage,2,"), out.toString());

    // Only the listed tag is a label value; every other tag is "other", no tag "none".
    Set<String> labels =
        Eventually.until(
            "the spend metric counts the tagged and untagged calls",
            Duration.ofSeconds(20),
            this::spendTagLabels,
            values -> values.containsAll(Set.of("onboarding", "other", "none")));
    assertEquals(Set.of("onboarding", "other", "none"), labels);
  }

  @Test
  void eachAttemptIsReportedUnderItsModelAndProviderAndTheTotalsAreTheLedgers() throws Exception {
    Brand brand = Brand.fresh("models");
    assertEquals(200, call(CHAT, brand, "export").statusCode());
    assertEquals(200, call(ANTHROPIC, brand, null).statusCode());
    // The router's primary fails (below the breaker's threshold): every attempt reserved on its
    // own, so the fallback's reservation names the fallback's model and provider.
    gw.sim.scriptTimes(SimRoute.OPENAI_CHAT, Fault.status(503), 4);
    HttpResponse<String> routed = call(ROUTER, brand, "export");
    assertEquals(200, routed.statusCode(), routed.body());
    assertEquals("anthropic", routed.headers().firstValue("x-gateway-provider").orElse(""));
    JsonNode usage = gw.awaitSettled(brand.id());

    // Finance's CSV: by day, brand, model and workflow.
    List<String[]> rows = report(brand, "day,brand,model,tag");
    Map<String, String[]> byModelTag = new TreeMap<>();
    BigDecimal spent = BigDecimal.ZERO;
    for (String[] row : rows) {
      byModelTag.put(row[2] + "/" + row[3], row);
      // day,brand,model,tag,calls,settled_usd,voided,expired_usd,refused
      spent = spent.add(new BigDecimal(row[5])).add(new BigDecimal(row[7]));
    }
    assertEquals(
        Set.of(
            "gpt-6.1-sol/export",
            "claude-opus-5-5/",
            "gpt-6.1-sol-mini/export",
            "claude-haiku-5-5/export"),
        byModelTag.keySet(),
        String.join("\n", rows.stream().map(r -> String.join(",", r)).toList()));
    assertEquals("1", byModelTag.get("claude-haiku-5-5/export")[4], "the fallback's one attempt");
    String[] failed = byModelTag.get("gpt-6.1-sol-mini/export");
    assertEquals(failed[4], failed[6], "every failed attempt at the primary was voided");
    // To the micro-dollar what the ledger holds as the brand's spend today.
    BigDecimal ledger = null;
    for (JsonNode cap : usage.get("caps")) {
      if ("brand_daily".equals(cap.path("cap").asText())
          && brand.id().equals(cap.path("subject").asText())) {
        ledger = cap.path("spentUsd").decimalValue();
      }
    }
    assertEquals(0, spent.compareTo(ledger), spent + " reported, " + ledger + " in the ledger");

    // The providers, as journaled (their wire names).
    List<String[]> byProvider = report(brand, "brand,provider");
    assertEquals(List.of("anthropic", "openai"), byProvider.stream().map(r -> r[1]).toList());
  }

  /** The running gateway's {@code report --by by --format csv}: {@code brand}'s rows, split. */
  private List<String[]> report(Brand brand, String by) {
    // No field of these rows holds a comma: brand ids, models, providers and tags here are plain.
    return E2eGateway.reportCsv(gw, by).stream()
        .map(l -> l.split(",", -1))
        .filter(r -> List.of(r).contains(brand.id()))
        .toList();
  }

  /** The values the spend metric's {@code tag} label has on {@code /metrics} now. */
  private Set<String> spendTagLabels() throws Exception {
    HttpResponse<String> r = gw.send(gw.get("/metrics").header("x-api-key", TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    Set<String> values = new TreeSet<>();
    Matcher m =
        Pattern.compile("^gateway_spend_usd_total\\{[^}]*tag=\"([^\"]*)\"", Pattern.MULTILINE)
            .matcher(r.body());
    while (m.find()) {
      values.add(m.group(1));
    }
    return values;
  }
}
