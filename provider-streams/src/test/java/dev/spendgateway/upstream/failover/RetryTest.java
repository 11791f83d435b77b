package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Backoff, Retry-After parsing, the retry policy and the attempt budget. The jitter is drawn from a
 * new seed each run ({@code -Dfuzz.seed=S} replays one): every property here holds for any draw.
 */
class RetryTest {
  private static final Backoff BACKOFF = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(8));
  private static final Instant NOW = Instant.parse("2026-11-30T10:00:00Z");

  /**
   * One seed per run, printed before the first case and named in any failure, so a failing run can
   * be replayed with {@code -Dfuzz.seed=S}.
   */
  private static final long SEED = Long.getLong("fuzz.seed", System.nanoTime());

  @RegisterExtension
  static final TestExecutionExceptionHandler NAME_THE_SEED =
      (context, failure) -> {
        throw new AssertionError(
            failure.getMessage() + " [seed " + SEED + ": replay with -Dfuzz.seed=" + SEED + "]",
            failure);
      };

  @BeforeAll
  static void printTheSeed() {
    System.out.println("RetryTest: seed " + SEED + " (replay with -Dfuzz.seed=" + SEED + ")");
  }

  @ParameterizedTest(name = "attempt {0}: jitter window up to {1} ms")
  @CsvSource({
    "0, 500",
    "1, 1000",
    "2, 2000",
    "3, 4000",
    "4, 8000",
    "5, 8000",
    "40, 8000",
    "63, 8000",
    "1000, 8000"
  })
  void backoffWindowDoublesUpToTheCap(int attempt, long ceilingMs) {
    assertEquals(Duration.ofMillis(ceilingMs), BACKOFF.ceiling(attempt));
  }

  @Test
  void fullJitterStaysInTheWindowAndSpreadsOverIt() {
    SplittableRandom random = new SplittableRandom(SEED);
    long min = Long.MAX_VALUE;
    long max = 0;
    for (int i = 0; i < 10_000; i++) {
      long ms = BACKOFF.fullJitter(3, random).toMillis();
      assertTrue(ms >= 0 && ms <= 4000, "in [0, 4000]: " + ms);
      min = Math.min(min, ms);
      max = Math.max(max, ms);
    }
    assertTrue(min < 100 && max > 3900, "full jitter uses the whole window: " + min + ".." + max);
  }

  @ParameterizedTest(name = "Retry-After ''{0}'' → {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          7                             | PT7S
          0                             | PT0S
          1.5                           | PT1.5S
          Mon, 30 Nov 2026 10:00:30 GMT | PT30S
          Mon, 30 Nov 2026 09:59:00 GMT | PT0S
          soon                          | none
          -3                            | none
          ''                            | none
          18446744073709551616          | PT876000H
          9223372036854775.808          | PT876000H
          3153600000                    | PT876000H
          3153599999.5                  | PT875999H59M59.5S
          """)
  void parsesRetryAfter(String header, String expected) {
    Optional<Duration> parsed = RetryAfter.parse(header, NOW);
    assertEquals(expected, parsed.map(Duration::toString).orElse("none"));
  }

  @Test
  void parsesRetryAfterMs() {
    assertEquals(Optional.of(Duration.ofMillis(250)), RetryAfter.parseMillis("250"));
    assertEquals(Optional.empty(), RetryAfter.parseMillis("x"));
    assertEquals(Optional.empty(), RetryAfter.parseMillis(null));
    assertEquals(Optional.of(Duration.ofNanos(1_500)), RetryAfter.parseMillis("0.0015"));
  }

  /**
   * A number too large for a long must read as a very long wait (fail over at once), never as its
   * low 64 bits: 2^64 s and 2^64 ns both used to read as 0 (an immediate retry on the provider that
   * asked for a long pause), 2^63 ms as a negative wait.
   */
  @ParameterizedTest(name = "retry-after-ms ''{0}'' is a very long wait")
  @CsvSource({"18446744073709.551616", "18446744073709551616000", "1e400", "9223372036854775808"})
  void aHugeRetryAfterMsIsAVeryLongWait(String header) {
    assertEquals(Optional.of(RetryAfter.LONGEST), RetryAfter.parseMillis(header));
    RetryPolicy policy = new RetryPolicy(BACKOFF, Duration.ofSeconds(20));
    assertEquals(
        Optional.empty(),
        policy.waitBeforeRetry(0, RetryAfter.parseMillis(header), new SplittableRandom(SEED)),
        "past max-retry-after: no retry on that provider");
  }

  @Test
  void retryPolicyHonoursAnAffordableRetryAfterAndRefusesALongOne() {
    RetryPolicy policy = new RetryPolicy(BACKOFF, Duration.ofSeconds(20));
    SplittableRandom random = new SplittableRandom(SEED);
    assertEquals(
        Optional.of(Duration.ofSeconds(20)),
        policy.waitBeforeRetry(0, Optional.of(Duration.ofSeconds(20)), random));
    assertEquals(
        Optional.empty(), policy.waitBeforeRetry(0, Optional.of(Duration.ofSeconds(21)), random));
    Duration backoff = policy.waitBeforeRetry(2, Optional.empty(), random).orElseThrow();
    assertTrue(backoff.compareTo(Duration.ofSeconds(2)) <= 0);
  }

  @Test
  void budgetBoundsAttempts() {
    AtomicLong clock = new AtomicLong();
    AttemptBudget budget =
        AttemptBudget.start(new AttemptBudget.Limits(3, Duration.ofSeconds(30)), clock::get);
    assertTrue(budget.tryStartAttempt());
    assertTrue(budget.tryStartAttempt());
    assertTrue(budget.allowsRetryAfter(Duration.ofSeconds(1)));
    assertTrue(budget.tryStartAttempt());
    assertFalse(budget.canAttempt());
    assertFalse(budget.tryStartAttempt());
    assertFalse(budget.allowsRetryAfter(Duration.ZERO));
    assertEquals(3, budget.attempts());
  }

  @Test
  void budgetBoundsTotalTime() {
    AtomicLong clock = new AtomicLong(1_000);
    AttemptBudget budget =
        AttemptBudget.start(new AttemptBudget.Limits(10, Duration.ofSeconds(30)), clock::get);
    budget.tryStartAttempt();
    clock.addAndGet(Duration.ofSeconds(25).toNanos());
    assertEquals(Duration.ofSeconds(5), budget.remaining());
    assertTrue(budget.allowsRetryAfter(Duration.ofSeconds(4)));
    assertFalse(
        budget.allowsRetryAfter(Duration.ofSeconds(5)),
        "a wait that ends at the deadline leaves no time to call");
    clock.addAndGet(Duration.ofSeconds(6).toNanos());
    assertEquals(Duration.ZERO, budget.remaining());
    assertFalse(budget.tryStartAttempt());
  }

  @Test
  void affordableWaitCombinesPolicyAndBudget() {
    AtomicLong clock = new AtomicLong();
    RetryPolicy policy = new RetryPolicy(BACKOFF, Duration.ofSeconds(20));
    AttemptBudget budget =
        AttemptBudget.start(new AttemptBudget.Limits(4, Duration.ofSeconds(10)), clock::get);
    budget.tryStartAttempt();
    SplittableRandom random = new SplittableRandom(SEED);
    assertEquals(
        Optional.of(Duration.ofSeconds(5)),
        policy.affordableWait(0, Optional.of(Duration.ofSeconds(5)), random, budget));
    assertEquals(
        Optional.empty(),
        policy.affordableWait(0, Optional.of(Duration.ofSeconds(15)), random, budget),
        "fits the policy, not the budget");
  }
}
