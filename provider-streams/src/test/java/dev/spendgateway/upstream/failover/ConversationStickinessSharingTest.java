package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** What a node tells the cluster of its routing state, and what it does not repeat. */
class ConversationStickinessSharingTest {
  private final AtomicLong now = new AtomicLong(0);
  private final List<String> shared = new ArrayList<>();

  @Test
  void aSwitchIsSharedAtOnceAndLaterCallsAtMostOncePerTenthOfTheTtl() {
    ConversationStickiness s =
        new ConversationStickiness(
            10, Duration.ofMinutes(30), now::get, (id, p) -> shared.add(id + " " + p.wireName()));

    s.stick("conv", Provider.ANTHROPIC);
    assertEquals(List.of("conv anthropic"), shared);

    for (int i = 0; i < 10; i++) {
      now.addAndGet(Duration.ofSeconds(10).toNanos());
      s.find("conv");
    }
    assertEquals(1, shared.size(), "calls within three minutes of the last share are not repeated");

    now.addAndGet(Duration.ofMinutes(2).toNanos());
    s.find("conv");
    assertEquals(2, shared.size(), "three minutes on, the call is shared");
    assertEquals(Duration.ofMinutes(3), s.shareEvery());
  }

  @Test
  void aSweepForgetsExpiredEntriesOnly() {
    ConversationStickiness s = new ConversationStickiness(10, Duration.ofMinutes(30), now::get);
    s.stick("old", Provider.ANTHROPIC);
    now.addAndGet(Duration.ofMinutes(20).toNanos());
    s.stick("new", Provider.ANTHROPIC);
    now.addAndGet(Duration.ofMinutes(10).toNanos());

    assertEquals(1, s.pruneExpired());
    assertEquals(1, s.size());
    assertEquals(Optional.of(Provider.ANTHROPIC), s.find("new"));
  }

  @Test
  void aModelCircuitTellsTheClusterOfItsOpeningAndResetButNotOfOnesFromElsewhere() {
    List<String> told = new ArrayList<>();
    ModelCircuits circuits =
        new ModelCircuits(
            Optional.empty(),
            now::get,
            model -> {},
            new ModelCircuits.Sharing() {
              @Override
              public void opened(String model) {
                told.add("opened " + model);
              }

              @Override
              public void reset(String model) {
                told.add("reset " + model);
              }
            });

    circuits.onModelGone("gpt-4.1");
    circuits.onModelGone("gpt-4.1");
    circuits.openedElsewhere("gpt-6-sol", Duration.ofSeconds(1));
    circuits.reset("gpt-4.1");

    assertEquals(List.of("opened gpt-4.1", "reset gpt-4.1"), told);
    assertTrue(circuits.isOpen("gpt-6-sol"));
  }
}
