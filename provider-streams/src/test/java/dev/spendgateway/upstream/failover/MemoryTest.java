package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.translate.JsonForTests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** ConversationStickiness, SchemaModeMemory and ModelCircuits: the bounded in-memory state. */
class MemoryTest {

  @Test
  void aConversationSticksToItsFirstSwitchUntilTheTtl() {
    AtomicLong clock = new AtomicLong();
    ConversationStickiness s = new ConversationStickiness(10, Duration.ofMinutes(30), clock::get);
    assertEquals(Optional.empty(), s.find("c1"));
    assertEquals(Provider.ANTHROPIC, s.stick("c1", Provider.ANTHROPIC));
    assertEquals(Provider.ANTHROPIC, s.stick("c1", Provider.OPENAI), "switches at most once");
    clock.addAndGet(Duration.ofMinutes(29).toNanos());
    assertEquals(Optional.of(Provider.ANTHROPIC), s.find("c1"));
    clock.addAndGet(Duration.ofMinutes(30).toNanos());
    assertEquals(Optional.empty(), s.find("c1"), "30 min after its last call");
    assertEquals(Optional.empty(), s.find(null));
  }

  /**
   * A conversation still in use stays on its fallback: the ttl runs from its last call, not from
   * the switch. Counted from the switch, a chat that went on for more than 30 min flipped back to
   * OpenAI in the middle (a second switch), and could then switch again on the next outage.
   */
  @Test
  void aConversationInUseStaysStuckPastTheTtlFromItsSwitch() {
    AtomicLong clock = new AtomicLong();
    ConversationStickiness s = new ConversationStickiness(10, Duration.ofMinutes(30), clock::get);
    s.stick("c1", Provider.ANTHROPIC);
    for (int minute = 20; minute <= 120; minute += 20) {
      clock.addAndGet(Duration.ofMinutes(20).toNanos());
      assertEquals(
          Optional.of(Provider.ANTHROPIC),
          s.find("c1"),
          "a call " + minute + " min after the switch");
    }
    clock.addAndGet(Duration.ofMinutes(30).toNanos());
    assertEquals(Optional.empty(), s.find("c1"), "30 min without a call: forgotten");
  }

  @Test
  void stickinessIsBoundedLeastRecentlyUsedFirst() {
    ConversationStickiness s = new ConversationStickiness(2, Duration.ofMinutes(30), () -> 0L);
    s.stick("a", Provider.ANTHROPIC);
    s.stick("b", Provider.ANTHROPIC);
    s.find("a");
    s.stick("c", Provider.ANTHROPIC);
    assertEquals(2, s.size());
    assertTrue(s.find("a").isPresent());
    assertFalse(s.find("b").isPresent());
  }

  @Test
  void stickinessUnderConcurrencyKeepsOneProviderPerConversationAndTheBound() throws Exception {
    ConversationStickiness s =
        new ConversationStickiness(500, Duration.ofMinutes(30), System::nanoTime);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    CountDownLatch go = new CountDownLatch(1);
    ConcurrentHashMap<String, Provider> firstAnswer = new ConcurrentHashMap<>();
    List<Future<Boolean>> results = new ArrayList<>();
    try {
      for (int t = 0; t < 16; t++) {
        Provider mine = t % 2 == 0 ? Provider.ANTHROPIC : Provider.OPENAI;
        results.add(
            pool.submit(
                () -> {
                  go.await();
                  boolean consistent = true;
                  for (int i = 0; i < 2_000; i++) {
                    String id = "conv-" + (i % 300);
                    Provider stuck = s.stick(id, mine);
                    Provider seen = firstAnswer.putIfAbsent(id, stuck);
                    consistent &= seen == null || seen == stuck;
                  }
                  return consistent;
                }));
      }
      go.countDown();
      for (Future<Boolean> r : results) {
        assertTrue(r.get(20, TimeUnit.SECONDS), "every thread saw one provider per conversation");
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(300, s.size());
  }

  @Test
  void schemaMemoryMatchesEqualSchemasWhateverTheKeyOrder() {
    SchemaModeMemory memory = new SchemaModeMemory(100);
    memory.rememberRejected(
        JsonForTests.parse(
            "{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"string\"},\"a\":{\"type\":\"number\"}}}"));
    assertTrue(
        memory.wasRejected(
            JsonForTests.parse(
                "{\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"string\"}},\"type\":\"object\"}")));
    assertFalse(memory.wasRejected(JsonForTests.parse("{\"type\":\"object\"}")));
    assertEquals(64, SchemaModeMemory.hash(JsonForTests.parse("{}")).length());
  }

  @Test
  void schemaMemoryIsBounded() {
    SchemaModeMemory memory = new SchemaModeMemory(3);
    for (int i = 0; i < 10; i++) {
      memory.rememberRejected(JsonForTests.parse("{\"maxLength\":" + i + "}"));
    }
    assertEquals(3, memory.size());
    assertTrue(memory.wasRejected(JsonForTests.parse("{\"maxLength\":9}")));
    assertFalse(memory.wasRejected(JsonForTests.parse("{\"maxLength\":0}")));
  }

  @Test
  void aModelCircuitOpensOnceAndAlarmsOnce() {
    List<String> alarms = new ArrayList<>();
    ModelCircuits circuits = new ModelCircuits(Optional.empty(), () -> 0L, alarms::add);
    assertFalse(circuits.isOpen("gpt-4.1"));
    assertTrue(circuits.onModelGone("gpt-4.1"));
    assertFalse(circuits.onModelGone("gpt-4.1"));
    assertTrue(circuits.isOpen("gpt-4.1"));
    assertFalse(circuits.isOpen("gpt-6.1-sol"), "per model, not per provider");
    assertEquals(List.of("gpt-4.1"), alarms);
    circuits.reset("gpt-4.1");
    assertFalse(circuits.isOpen("gpt-4.1"));
  }

  @Test
  void aTimedModelCircuitClosesAfterItsTimeAndAlarmsAgainOnTheNext410() {
    AtomicLong clock = new AtomicLong();
    List<String> alarms = new ArrayList<>();
    ModelCircuits circuits =
        new ModelCircuits(Optional.of(Duration.ofHours(1)), clock::get, alarms::add);
    circuits.onModelGone("m");
    clock.addAndGet(Duration.ofMinutes(59).toNanos());
    assertEquals(java.util.Set.of("m"), circuits.openModels());
    clock.addAndGet(Duration.ofMinutes(1).toNanos());
    assertFalse(circuits.isOpen("m"));
    assertTrue(circuits.onModelGone("m"));
    assertEquals(List.of("m", "m"), alarms);
  }
}
