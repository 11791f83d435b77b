package dev.spendgateway.edge.metrics;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class MeterTableTest {

  @Test
  void eachSetOfValuesGetsItsOwnMeterBuiltOnce() {
    List<List<String>> built = new ArrayList<>();
    MeterTable<List<String>> table =
        new MeterTable<>(
            values -> {
              List<String> meter = List.of(values);
              built.add(meter);
              return meter;
            });
    List<String> first = table.get("openai", "gpt", "200");
    assertSame(first, table.get("openai", "gpt", "200"), "found again, not rebuilt");
    assertEquals(List.of("openai", "gpt", "200"), first, "the maker sees the values in order");
    assertNotSame(first, table.get("openai", "gpt", "429"));
    assertNotSame(first, table.get("anthropic", "gpt", "200"));
    assertEquals(3, built.size());
  }

  @Test
  void everyArityKeepsItsValues() {
    MeterTable<String[]> table = new MeterTable<>(values -> values);
    assertArrayEquals(new String[] {"a"}, table.get("a"));
    assertArrayEquals(new String[] {"a", "b"}, table.get("a", "b"));
    assertArrayEquals(new String[] {"a", "b", "c"}, table.get("a", "b", "c"));
    assertArrayEquals(new String[] {"a", "b", "c", "d"}, table.get("a", "b", "c", "d"));
  }

  @Test
  void threadsRacingForANewMeterGetTheSameOne() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AtomicInteger makes = new AtomicInteger();
    MeterTable<Counter> table =
        new MeterTable<>(
            values -> {
              makes.incrementAndGet();
              return Counter.builder("c").tag("k", values[0]).register(registry);
            });
    int threads = 8;
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> running = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; i < 1_000; i++) {
                  table.get("v" + (i % 10)).increment();
                }
              });
      thread.start();
      running.add(thread);
    }
    start.countDown();
    for (Thread thread : running) {
      thread.join();
    }
    assertEquals(10, makes.get());
    assertEquals(threads * 100.0, registry.get("c").tag("k", "v3").counter().count());
  }
}
