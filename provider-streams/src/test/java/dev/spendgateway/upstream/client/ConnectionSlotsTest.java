package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A provider's connection slots: never more than the limit taken, each given back once. */
class ConnectionSlotsTest {

  @Test
  void a_call_past_the_limit_gets_no_slot_until_one_is_given_back() {
    ConnectionSlots slots = new ConnectionSlots(3);
    List<ConnectionSlots.Slot> taken = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      taken.add(slots.tryTake().orElseThrow());
    }
    assertTrue(slots.tryTake().isEmpty(), "a fourth call is refused, not queued");
    assertEquals(3, slots.inUse());

    taken.get(0).release();
    assertEquals(2, slots.inUse());
    assertTrue(slots.tryTake().isPresent(), "a freed slot is taken again");
  }

  @Test
  void releasing_twice_gives_back_one_slot() {
    ConnectionSlots slots = new ConnectionSlots(2);
    ConnectionSlots.Slot slot = slots.tryTake().orElseThrow();
    slots.tryTake().orElseThrow();
    slot.release();
    slot.release();
    assertEquals(
        1, slots.inUse(), "the body's end and a late failure may both release: counted once");
  }

  @Test
  void many_threads_never_take_more_than_the_limit() throws Exception {
    ConnectionSlots slots = new ConnectionSlots(50);
    List<Thread> threads = new ArrayList<>();
    java.util.concurrent.atomic.AtomicInteger got = new java.util.concurrent.atomic.AtomicInteger();
    for (int t = 0; t < 8; t++) {
      Thread thread =
          new Thread(
              () -> {
                for (int i = 0; i < 100; i++) {
                  slots.tryTake().ifPresent(s -> got.incrementAndGet());
                }
              });
      thread.start();
      threads.add(thread);
    }
    for (Thread t : threads) {
      t.join();
    }
    assertEquals(50, got.get());
    assertEquals(50, slots.inUse());
  }
}
