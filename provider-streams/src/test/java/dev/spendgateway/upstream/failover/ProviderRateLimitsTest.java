package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.ProviderRateLimits.Limits;
import dev.spendgateway.upstream.failover.ProviderRateLimits.Turn;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class ProviderRateLimitsTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);

  private ProviderRateLimits limits(long rpm, long tpm, Duration maxWait) {
    return new ProviderRateLimits(
        Map.of(Provider.OPENAI, new Limits(rpm, tpm), Provider.ANTHROPIC, new Limits(0, 0)),
        maxWait,
        now::get);
  }

  @Test
  void aMinutesWorthGoesAtOnceThenCallsWaitTheirTurnInOrder() {
    ProviderRateLimits l = limits(60, 0, Duration.ofSeconds(5));
    for (int i = 0; i < 60; i++) {
      assertEquals(new Turn.Go(Duration.ZERO), l.take(Provider.OPENAI, 10), "call " + i);
    }
    assertEquals(
        new Turn.Go(Duration.ofSeconds(1)),
        l.take(Provider.OPENAI, 10),
        "one a second after the burst");
    assertEquals(
        new Turn.Go(Duration.ofSeconds(2)),
        l.take(Provider.OPENAI, 10),
        "queued behind the previous one");
  }

  @Test
  void aCallThatWouldWaitLongerThanTheMaximumIsRefusedAndTakesNothing() {
    ProviderRateLimits l = limits(60, 0, Duration.ofSeconds(2));
    for (int i = 0; i < 62; i++) {
      assertInstanceOf(Turn.Go.class, l.take(Provider.OPENAI, 1));
    }
    Turn refused = l.take(Provider.OPENAI, 1);
    assertEquals(new Turn.Refused(Duration.ofSeconds(3), "requests per minute"), refused);
    now.addAndGet(Duration.ofSeconds(1).toNanos());
    assertEquals(
        new Turn.Go(Duration.ofSeconds(2)),
        l.take(Provider.OPENAI, 1),
        "the refusal took no place in line");
  }

  @Test
  void tokensAreCountedAtTheWorstCaseAndRefillContinuously() {
    ProviderRateLimits l = limits(0, 6_000, Duration.ofSeconds(30));
    assertEquals(new Turn.Go(Duration.ZERO), l.take(Provider.OPENAI, 6_000));
    assertEquals(
        new Turn.Go(Duration.ofSeconds(10)), l.take(Provider.OPENAI, 1_000), "100 tokens a second");
    now.addAndGet(Duration.ofSeconds(20).toNanos());
    assertEquals(new Turn.Go(Duration.ZERO), l.take(Provider.OPENAI, 1_000), "refilled meanwhile");
  }

  @Test
  void aTurnGivenBackByACallerWhoHungUpGoesToTheNextNewcomerAndNeverOverfills() {
    ProviderRateLimits l = limits(60, 6_000, Duration.ofSeconds(30));
    for (int i = 0; i < 60; i++) {
      l.take(Provider.OPENAI, 100); // the minute's requests and all 6,000 tokens
    }
    assertEquals(new Turn.Go(Duration.ofSeconds(10)), l.take(Provider.OPENAI, 1_000));
    l.giveBack(Provider.OPENAI, 1_000); // its caller left while it waited
    assertEquals(
        new Turn.Go(Duration.ofSeconds(1)),
        l.take(Provider.OPENAI, 100),
        "the next call waits as if the one who left had never come");

    ProviderRateLimits idle = limits(60, 6_000, Duration.ofSeconds(30));
    idle.giveBack(Provider.OPENAI, 6_000); // nothing was taken: the bucket stays a minute's worth
    for (int i = 0; i < 60; i++) {
      idle.take(Provider.OPENAI, 100);
    }
    assertEquals(
        new Turn.Go(Duration.ofSeconds(1)),
        idle.take(Provider.OPENAI, 100),
        "a give-back never lets more than a minute's worth through at once");
  }

  @Test
  void aCallLargerThanAMinutesTokensCanStillGoWhenTheBucketIsFull() {
    ProviderRateLimits l = limits(0, 1_000, Duration.ofSeconds(5));
    assertEquals(
        new Turn.Go(Duration.ZERO), l.take(Provider.OPENAI, 50_000), "never refused for ever");
  }

  @Test
  void bothLimitsDecideTogetherAndTheLongerWaitNamesTheLimit() {
    ProviderRateLimits l = limits(600, 600, Duration.ofSeconds(60));
    assertEquals(new Turn.Go(Duration.ZERO), l.take(Provider.OPENAI, 600));
    Turn t = l.take(Provider.OPENAI, 60);
    assertEquals(new Turn.Go(Duration.ofSeconds(6)), t, "the tokens are the longer wait");
  }

  @Test
  void aProviderWithoutLimitsIsNeverHeldBack() {
    ProviderRateLimits l = limits(1, 1, Duration.ZERO);
    assertFalse(l.limits(Provider.ANTHROPIC));
    assertTrue(l.limits(Provider.OPENAI));
    for (int i = 0; i < 1000; i++) {
      assertEquals(new Turn.Go(Duration.ZERO), l.take(Provider.ANTHROPIC, 1_000_000));
    }
  }

  @Test
  void anIdleDayDoesNotOverflowTheBucket() {
    ProviderRateLimits l = limits(100_000, 10_000_000, Duration.ofSeconds(1));
    now.addAndGet(Duration.ofDays(1).toNanos());
    assertEquals(new Turn.Go(Duration.ZERO), l.take(Provider.OPENAI, 10_000_000));
  }

  @Test
  void aLimitTooLargeToCountExactlyIsRefusedAtStartNamingItsKey() {
    var config =
        ConfigFactory.parseString(
            "failover.rate-limits { enabled = on, interactive-reserve = 0.2, max-wait = 5s,"
                + " openai { requests-per-minute = 0, tokens-per-minute = 150000000 },"
                + " anthropic { requests-per-minute = 0, tokens-per-minute = 0 } }");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> ProviderRateLimits.fromConfig(config, now::get));
    assertTrue(e.getMessage().startsWith("failover.rate-limits.openai."), e.getMessage());
    assertTrue(e.getMessage().contains("at most 50000000 per minute"), e.getMessage());
  }

  @Test
  void theLargestAllowedLimitLetsCallsQueueWithoutOverflow() {
    ProviderRateLimits l =
        limits(
            ProviderRateLimits.MAX_PER_MINUTE,
            ProviderRateLimits.MAX_PER_MINUTE,
            Duration.ofSeconds(59));
    // A minute's worth at once, then as deep a debt as the maximum wait allows: every answer is a
    // wait within the limit, never a negative or wrapped-around one.
    assertEquals(
        new Turn.Go(Duration.ZERO), l.take(Provider.OPENAI, ProviderRateLimits.MAX_PER_MINUTE));
    Turn next = l.take(Provider.OPENAI, ProviderRateLimits.MAX_PER_MINUTE / 2);
    Turn.Go go = assertInstanceOf(Turn.Go.class, next);
    assertEquals(Duration.ofSeconds(30), go.after());
    Turn.Refused refused =
        assertInstanceOf(
            Turn.Refused.class, l.take(Provider.OPENAI, ProviderRateLimits.MAX_PER_MINUTE));
    assertEquals(Duration.ofSeconds(90), refused.retryAfter());
  }

  // --- interactive first: the reserve batch calls never take ----------------------------------

  /** One call: its pool and worst-case tokens. */
  record Take(Pool pool, long tokens) {
    static List<Take> times(int n, Pool pool, long tokens) {
      return java.util.Collections.nCopies(n, new Take(pool, tokens));
    }
  }

  private ProviderRateLimits reserved(long rpm, long tpm, double reserve, Duration maxWait) {
    return new ProviderRateLimits(
        Map.of(Provider.OPENAI, new Limits(rpm, tpm), Provider.ANTHROPIC, new Limits(0, 0)),
        reserve,
        maxWait,
        now::get);
  }

  static Stream<Arguments> reserveRows() {
    Pool b = Pool.BATCH;
    Pool i = Pool.INTERACTIVE;
    String rpm = "requests per minute (interactive reserve)";
    return Stream.of(
        Arguments.of(
            "a batch call goes at once while more than the reserve is left",
            10,
            0,
            0.2,
            10,
            List.of(),
            new Take(b, 1),
            new Turn.Go(Duration.ZERO)),
        Arguments.of(
            "batch takes the unreserved 8 of 10, then is told when the share above the reserve is"
                + " back, holding nothing",
            10,
            0,
            0.2,
            10,
            Take.times(8, b, 1),
            new Take(b, 1),
            new Turn.NotYet(Duration.ofSeconds(6), rpm)),
        Arguments.of(
            "a batch call whose share is back later than the maximum wait is refused",
            10,
            0,
            0.2,
            5,
            Take.times(8, b, 1),
            new Take(b, 1),
            new Turn.Refused(Duration.ofSeconds(6), rpm)),
        Arguments.of(
            "after a batch flood an interactive call still goes at once: the reserve is its",
            10,
            0,
            0.2,
            10,
            Take.times(8, b, 1),
            new Take(i, 1),
            new Turn.Go(Duration.ZERO)),
        Arguments.of(
            "interactive calls take the reserve to its end, then wait their turn as before",
            10,
            0,
            0.2,
            10,
            concat(Take.times(8, b, 1), Take.times(2, i, 1)),
            new Take(i, 1),
            new Turn.Go(Duration.ofSeconds(6))),
        Arguments.of(
            "batch never waits behind interactive debt inside the bucket: it is told to come back",
            10,
            0,
            0.2,
            30,
            Take.times(11, i, 1),
            new Take(b, 1),
            new Turn.NotYet(Duration.ofSeconds(24), rpm)),
        Arguments.of(
            "with no reserve a batch call is paced like an interactive one",
            10,
            0,
            0.0,
            10,
            Take.times(10, b, 1),
            new Take(b, 1),
            new Turn.Go(Duration.ofSeconds(6))),
        Arguments.of(
            "tokens keep their reserve too: after 700 of 1,000, 100 more would leave 200 of the 250"
                + " kept",
            0,
            1_000,
            0.25,
            30,
            List.of(new Take(b, 700)),
            new Take(b, 100),
            new Turn.NotYet(Duration.ofSeconds(3), "tokens per minute (interactive reserve)")),
        Arguments.of(
            "a batch call larger than the unreserved part counts as that part, so it can go",
            0,
            1_000,
            0.25,
            30,
            List.of(),
            new Take(b, 5_000),
            new Turn.Go(Duration.ZERO)),
        Arguments.of(
            "and then leaves the reserve whole for an interactive call",
            0,
            1_000,
            0.25,
            30,
            List.of(new Take(b, 5_000)),
            new Take(i, 250),
            new Turn.Go(Duration.ZERO)));
  }

  private static List<Take> concat(List<Take> a, List<Take> b) {
    List<Take> all = new java.util.ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reserveRows")
  void batchCallsNeverTakeTheInteractiveReserve(
      String sentence,
      long rpm,
      long tpm,
      double reserve,
      long maxWaitSeconds,
      List<Take> before,
      Take probe,
      Turn expected) {
    ProviderRateLimits l = reserved(rpm, tpm, reserve, Duration.ofSeconds(maxWaitSeconds));
    for (Take t : before) {
      l.take(Provider.OPENAI, t.pool(), t.tokens());
    }
    assertEquals(expected, l.take(Provider.OPENAI, probe.pool(), probe.tokens()));
  }

  @Test
  void theLimitsAreDescribedForTheStartLine() {
    assertEquals(
        "openai: 500 requests, 500000 tokens a minute (100, 100000 kept for interactive calls);"
            + " anthropic: off",
        reserved(500, 500_000, 0.2, Duration.ofSeconds(5)).describe());
    assertEquals(
        "openai: 30 requests, any tokens a minute (3, 0 kept for interactive calls); anthropic: off",
        reserved(30, 0, 0.1, Duration.ofSeconds(5)).describe(),
        "a tenth of 30 is 3, not the 4 a double's 3.0000000000000004 would round up to");
    assertEquals(
        "openai: 60 requests, any tokens a minute; anthropic: off",
        reserved(60, 0, 0, Duration.ofSeconds(5)).describe());
  }

  @Test
  void aBatchCallGivenBackReturnsExactlyWhatItTook() {
    ProviderRateLimits l = reserved(0, 1_000, 0.25, Duration.ofSeconds(30));
    assertEquals(new Turn.Go(Duration.ZERO), l.take(Provider.OPENAI, Pool.BATCH, 5_000));
    l.giveBack(Provider.OPENAI, Pool.BATCH, 5_000);
    assertEquals(
        new Turn.Go(Duration.ZERO),
        l.take(Provider.OPENAI, Pool.BATCH, 750),
        "the 750 it counted are back, no more (a full bucket)");
  }

  /**
   * A minute simulated in 100 ms steps on the injected clock: a batch flood asks for five times the
   * limit the whole minute while an interactive burst of 100 comes every 15 s. With the reserve,
   * every interactive call goes at once and the flood still gets the rest of the minute; without
   * it, the flood leaves the interactive bursts waiting or refused.
   */
  @ParameterizedTest(name = "reserve {0}: interactive calls that waited or were refused: {1}")
  @CsvSource({"0.2, false", "0.0, true"})
  void aBatchFloodLeavesTheReserveToInteractiveBursts(double reserve, boolean interactiveHeldBack) {
    ProviderRateLimits l = reserved(600, 0, reserve, Duration.ofSeconds(5));
    int interactiveHeld = 0;
    int batchTaken = 0;
    for (int step = 0; step < 600; step++) {
      for (int k = 0; k < 5; k++) {
        if (l.take(Provider.OPENAI, Pool.BATCH, 1) instanceof Turn.Go go && go.after().isZero()) {
          batchTaken++;
        } else if (reserve == 0) {
          break; // without a reserve a batch call queues in debt; the flood's rest waits its turn
        }
      }
      if (step % 150 == 75) {
        for (int c = 0; c < 100; c++) {
          Turn t = l.take(Provider.OPENAI, Pool.INTERACTIVE, 1);
          if (!(t instanceof Turn.Go go && go.after().isZero())) {
            interactiveHeld++;
          }
        }
      }
      now.addAndGet(Duration.ofMillis(100).toNanos());
    }
    assertEquals(interactiveHeldBack, interactiveHeld > 0, "interactive held: " + interactiveHeld);
    if (!interactiveHeldBack) {
      // The minute's 600 plus 600 refilled, less the 400 interactive calls and the 120 kept.
      assertTrue(batchTaken >= 600, "the flood still gets most of the minute: " + batchTaken);
    }
  }
}
