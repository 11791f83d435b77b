package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.ProviderRateLimits.Limits;
import dev.spendgateway.upstream.failover.ProviderRateLimits.Turn;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The cluster's limits shared out among its live nodes. */
class ProviderRateLimitsShareTest {

  @ParameterizedTest(name = "a limit of {0} among {1} nodes gives node {2} a share of {3}")
  @CsvSource({
    "500, 1, 0, 500",
    "500, 2, 0, 250",
    "500, 3, 0, 167",
    "500, 3, 1, 167",
    "500, 3, 2, 166",
    "50, 3, 0, 17",
    "50, 3, 2, 16",
    "30, 3, 1, 10",
    "2, 3, 0, 1",
    "2, 3, 2, 1"
  })
  void aNodesShareIsTheLimitDividedWithTheRemainderToTheFirstNodes(
      long limit, int nodes, int rank, long share) {
    assertEquals(share, ProviderRateLimits.shareOf(limit, nodes, rank));
  }

  @ParameterizedTest(name = "the shares of {0} among {1} nodes add up to the limit")
  @CsvSource({"500, 3", "38000, 3", "50, 7", "1000, 4", "7, 7"})
  void theSharesAddUpToExactlyTheLimit(long limit, int nodes) {
    long total =
        IntStream.range(0, nodes).mapToLong(r -> ProviderRateLimits.shareOf(limit, nodes, r)).sum();
    assertEquals(limit, total);
  }

  @Test
  void aRankOutsideTheNodesIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> ProviderRateLimits.shareOf(10, 3, 3));
    assertThrows(IllegalArgumentException.class, () -> ProviderRateLimits.shareOf(10, 0, 0));
  }

  @Test
  void aNodeSendsOnlyItsShareAndGetsMoreWhenANodeLeaves() {
    AtomicLong now = new AtomicLong(0);
    ProviderRateLimits limits =
        new ProviderRateLimits(Map.of(Provider.OPENAI, new Limits(30, 0)), Duration.ZERO, now::get);
    limits.shareAmong(3, 0);

    assertEquals(10, goes(limits, 30), "a third of the cluster's 30 a minute");

    // Half a minute later one node left: two share the limit; this node's bucket keeps the
    // fraction of a minute it had refilled (half), now of 15 a minute.
    now.addAndGet(Duration.ofSeconds(30).toNanos());
    limits.shareAmong(2, 0);
    assertEquals(7, goes(limits, 30), "half a minute of 15 a minute (7.5, whole calls)");
    assertEquals(2, limits.sharedAmong());
  }

  @Test
  void aRebalanceKeepsAFullBucketFullAndDoesNotRefillAnEmptyOne() {
    AtomicLong now = new AtomicLong(0);
    ProviderRateLimits full =
        new ProviderRateLimits(Map.of(Provider.OPENAI, new Limits(60, 0)), Duration.ZERO, now::get);
    full.shareAmong(3, 0);
    assertEquals(20, goes(full, 100));

    ProviderRateLimits drained =
        new ProviderRateLimits(Map.of(Provider.OPENAI, new Limits(60, 0)), Duration.ZERO, now::get);
    assertEquals(60, goes(drained, 100));
    drained.shareAmong(3, 0);
    assertEquals(0, goes(drained, 100), "an empty bucket stays empty after the rebalance");
  }

  @Test
  void limitsThatAreOffStayOff() {
    ProviderRateLimits off = new ProviderRateLimits(Map.of(), Duration.ZERO, () -> 0L);
    off.shareAmong(3, 1);
    assertInstanceOf(Turn.Go.class, off.take(Provider.OPENAI, 1_000_000));
  }

  private static int goes(ProviderRateLimits limits, int tries) {
    int went = 0;
    for (int i = 0; i < tries; i++) {
      if (limits.take(Provider.OPENAI, 1) instanceof Turn.Go go && go.after().isZero()) {
        went++;
      }
    }
    return went;
  }
}
