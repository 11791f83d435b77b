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
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

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
            "failover.rate-limits { max-wait = 5s,"
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
}
