package dev.spendgateway.edge.call;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.policy.cost.CostCalculator;
import dev.spendgateway.policy.cost.TokenUsage;
import dev.spendgateway.policy.cost.UsageParsers;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.upstream.stream.StreamOutcome;
import dev.spendgateway.upstream.stream.Termination;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The one settlement rule, a row per way an attempt can end: how the reservation closes and the
 * access line's word. Pricing is {@link CostCalculator}'s (tested there); here a stand-in prices a
 * reported usage at one micro-dollar per token and finds over a million tokens implausible.
 */
class SettlementTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final Settlement.Pricing PRICING =
      usage -> {
        if (usage instanceof UsageReport.Reported reported) {
          long tokens = reported.usage().inputTokens() + reported.usage().outputTokens();
          return tokens > 1_000_000
              ? new CostCalculator.Settlement.KeepWorstCase(
                  "usage_implausible", "more tokens than any call")
              : new CostCalculator.Settlement.Billed(tokens);
        }
        return new CostCalculator.Settlement.KeepWorstCase(
            "usage_missing", ((UsageReport.NotReported) usage).reason());
      };

  private static final Settlement.Closing WORST = new Settlement.Closing.KeepWorstCase();
  private static final Settlement.Closing VOID = new Settlement.Closing.Void();

  private static Settlement.Closing cost(long micros) {
    return new Settlement.Closing.AtCost(micros);
  }

  private static JsonNode json(String text) {
    try {
      return JSON.readTree(text);
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  private static UpstreamOutcome stream(
      Termination end, String usage, boolean usageFinal, String errorClass) {
    StreamOutcome outcome =
        new StreamOutcome(
            Optional.ofNullable(usage).map(SettlementTest::json),
            end,
            false,
            100,
            3,
            0,
            Optional.ofNullable(errorClass),
            usageFinal);
    return new UpstreamOutcome.StreamEnded(outcome, UsageParsers::anthropic);
  }

  private static UpstreamOutcome answered(long input, long output) {
    return new UpstreamOutcome.Answered(
        new UsageReport.Reported(TokenUsage.ofTokens(input, output)));
  }

  static Stream<Arguments> rows() {
    String finalUsage = "{\"input_tokens\":20,\"output_tokens\":5}";
    return Stream.of(
        Arguments.of(
            "a JSON answer with its usage is settled at its cost", answered(20, 5), cost(25), null),
        Arguments.of(
            "a JSON answer without usage keeps the worst case as usage_missing",
            new UpstreamOutcome.Answered(new UsageReport.NotReported("no usage in the answer")),
            WORST,
            "usage_missing"),
        Arguments.of(
            "a JSON answer with a usage no call can have keeps the worst case as usage_implausible",
            answered(5_000_000, 5),
            WORST,
            "usage_implausible"),
        Arguments.of(
            "a stream that ended with its final usage is settled at its cost",
            stream(Termination.COMPLETED, finalUsage, true, null),
            cost(25),
            null),
        Arguments.of(
            "a stream whose final usage no call can have keeps the worst case as usage_implausible",
            stream(
                Termination.COMPLETED,
                "{\"input_tokens\":5000000,\"output_tokens\":5}",
                true,
                null),
            WORST,
            "usage_implausible"),
        Arguments.of(
            "an Anthropic stream with only message_start's usage keeps the worst case as usage_missing",
            stream(Termination.COMPLETED, "{\"input_tokens\":20,\"output_tokens\":1}", false, null),
            WORST,
            "usage_missing"),
        Arguments.of(
            "a stream that ended cleanly without any usage keeps the worst case as usage_missing",
            stream(Termination.COMPLETED, null, false, null),
            WORST,
            "usage_missing"),
        Arguments.of(
            "a stream cut by a connection reset keeps the worst case, naming the cut",
            stream(Termination.UPSTREAM_FAILED, finalUsage, false, "connection_lost"),
            WORST,
            "usage_missing:connection_lost"),
        Arguments.of(
            "a stream that ended before the provider's end event keeps the worst case as a cut",
            stream(Termination.ENDED_EARLY, finalUsage, true, null),
            WORST,
            "usage_missing:upstream_cut"),
        Arguments.of(
            "a stream whose caller left and whose drain timed out keeps the worst case",
            stream(Termination.DRAIN_TIMEOUT, null, false, "drain_timeout"),
            WORST,
            "usage_missing:drain_timeout"),
        Arguments.of(
            "an error status is not billed: void, as upstream_<status>",
            new UpstreamOutcome.ErrorStatus(500),
            VOID,
            "upstream_500"),
        Arguments.of(
            "a 429 is not billed either",
            new UpstreamOutcome.ErrorStatus(429),
            VOID,
            "upstream_429"),
        Arguments.of(
            "a request never sent (connection refused) is not billed: void",
            new UpstreamOutcome.NeverSent("upstream_connect_failed"),
            VOID,
            "upstream_connect_failed"),
        Arguments.of(
            "a call an open breaker refused was never sent: void",
            new UpstreamOutcome.NeverSent("breaker_open"),
            VOID,
            "breaker_open"),
        Arguments.of(
            "a request that may have reached the provider but got no answer keeps the worst case",
            new UpstreamOutcome.NoAnswer("upstream_connection_lost"),
            WORST,
            "upstream_connection_lost"),
        Arguments.of(
            "an answer cut before its end keeps the worst case",
            new UpstreamOutcome.Unreadable("upstream_cut"),
            WORST,
            "upstream_cut"),
        Arguments.of(
            "an answer too large to read keeps the worst case",
            new UpstreamOutcome.Unreadable("upstream_too_large"),
            WORST,
            "upstream_too_large"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void decides(String sentence, UpstreamOutcome outcome, Settlement.Closing closing, String word) {
    Settlement.Decision decision = Settlement.decide(outcome, PRICING);
    assertEquals(closing, decision.closing(), sentence);
    assertEquals(word, decision.outcomeWord(), sentence);
  }
}
