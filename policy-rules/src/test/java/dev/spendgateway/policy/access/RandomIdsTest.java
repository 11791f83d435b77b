package dev.spendgateway.policy.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class RandomIdsTest {

  @Test
  void anIdIsAVersion4UuidThatTheLedgerAcceptsWithTheGatewayPrefix() {
    for (int i = 0; i < 1_000; i++) {
      String id = RandomIds.uuid();
      UUID parsed = UUID.fromString(id);
      assertEquals(id, parsed.toString(), "canonical lower-case 8-4-4-4-12 form");
      assertEquals(4, parsed.version(), id);
      assertEquals(2, parsed.variant(), id);
      assertTrue(LedgerId.isValid("gw-" + id), id);
    }
  }

  @Test
  void idsFromManyThreadsNeverRepeat() throws Exception {
    int threads = 8;
    int each = 25_000;
    Set<String> seen = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> runs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        runs.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < each; i++) {
                    seen.add(RandomIds.uuid());
                  }
                }));
      }
      for (Future<?> run : runs) {
        run.get();
      }
    } finally {
      pool.shutdown();
    }
    assertEquals(threads * each, seen.size());
  }

  @Test
  void everyRandomBitVaries() {
    // The 122 random bits all take both values over a few hundred ids (a stuck bit would make ids
    // of different threads or restarts more likely to meet).
    long highOr = 0, highAnd = -1, lowOr = 0, lowAnd = -1;
    for (int i = 0; i < 500; i++) {
      UUID id = UUID.fromString(RandomIds.uuid());
      highOr |= id.getMostSignificantBits();
      highAnd &= id.getMostSignificantBits();
      lowOr |= id.getLeastSignificantBits();
      lowAnd &= id.getLeastSignificantBits();
    }
    assertEquals(~0L, highOr | 0xF000L, "high bits all seen set (version nibble aside)");
    assertEquals(0x4000L, highAnd, "high bits all seen clear (version nibble aside)");
    assertEquals(~0L, lowOr | 0xC000000000000000L, "low bits all seen set");
    assertEquals(0x8000000000000000L, lowAnd, "low bits all seen clear (variant aside)");
  }
}
