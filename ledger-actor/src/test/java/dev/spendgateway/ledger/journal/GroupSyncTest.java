package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The flush protocol on its own, with a scripted sync: a write is confirmed only after a sync that
 * began after it committed; writes that commit during a sync share the next one; a failed sync
 * fails only the writes it was to cover.
 */
class GroupSyncTest {
  /** A sync the test finishes by hand, in order. */
  private static final class ScriptedSync {
    final List<CompletableFuture<Void>> started = new ArrayList<>();

    synchronized CompletionStage<?> start() {
      CompletableFuture<Void> sync = new CompletableFuture<>();
      started.add(sync);
      return sync;
    }

    synchronized int count() {
      return started.size();
    }

    void finish(int index) {
      started.get(index).complete(null);
    }

    void fail(int index) {
      started.get(index).completeExceptionally(new java.io.IOException("disk full"));
    }
  }

  private final ScriptedSync sync = new ScriptedSync();
  private final JournalSyncStats stats = new JournalSyncStats();
  private final GroupSync groupSync = new GroupSync(sync::start, stats);

  @Test
  void aLoneWriteStartsASyncAndIsConfirmedOnlyWhenItEnds() {
    CompletableFuture<Void> write = groupSync.afterCommit().toCompletableFuture();
    assertEquals(1, sync.count(), "the sync starts at once");
    assertFalse(write.isDone(), "not confirmed before the sync is on disk");
    sync.finish(0);
    assertTrue(write.isDone() && !write.isCompletedExceptionally());
    assertEquals(1, stats.syncs());
    assertEquals(1, stats.syncedWrites());
  }

  @Test
  void writesCommittedDuringASyncWaitForTheNextOneAndShareIt() {
    CompletableFuture<Void> first = groupSync.afterCommit().toCompletableFuture();
    CompletableFuture<Void> second = groupSync.afterCommit().toCompletableFuture();
    CompletableFuture<Void> third = groupSync.afterCommit().toCompletableFuture();
    assertEquals(
        1, sync.count(), "the later writes do not start syncs of their own while one runs");

    sync.finish(0);
    assertTrue(first.isDone());
    assertFalse(
        second.isDone(), "the running sync may have started before the second write committed");
    assertFalse(third.isDone());
    assertEquals(2, sync.count(), "the next sync starts as soon as the running one ends");

    sync.finish(1);
    assertTrue(second.isDone() && third.isDone());
    assertEquals(2, stats.syncs());
    assertEquals(3, stats.syncedWrites());
    assertEquals(3, stats.writes());
  }

  @Test
  void noSyncRunsWhenNothingWaits() {
    groupSync.afterCommit();
    sync.finish(0);
    assertEquals(1, sync.count());
    groupSync.afterCommit();
    assertEquals(2, sync.count(), "a write after an idle period starts a fresh sync");
  }

  @Test
  void aFailedSyncFailsItsWritesOnlyAndTheNextGroupStillSyncs() {
    CompletableFuture<Void> first = groupSync.afterCommit().toCompletableFuture();
    CompletableFuture<Void> second = groupSync.afterCommit().toCompletableFuture();
    sync.fail(0);
    assertTrue(first.isCompletedExceptionally(), "a write whose flush failed is never confirmed");
    assertFalse(second.isDone());
    sync.finish(1);
    assertTrue(second.isDone() && !second.isCompletedExceptionally());
    assertEquals(1, stats.failedSyncs());
    assertEquals(1, stats.syncs());
  }

  @Test
  void aSyncThatThrowsFailsItsWrites() {
    GroupSync broken =
        new GroupSync(
            () -> {
              throw new IllegalStateException("database closed");
            },
            stats);
    ExecutionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ExecutionException.class,
            () -> broken.afterCommit().toCompletableFuture().get(1, TimeUnit.SECONDS));
    assertEquals("database closed", e.getCause().getMessage());
  }

  /**
   * Many writers on real threads against a sync that takes a little time: every write is confirmed
   * by a sync that started after it committed, and there are never more syncs than writes.
   */
  @Test
  void underConcurrentWritesEveryConfirmationFollowsASyncStartedAfterTheCommit() throws Exception {
    AtomicLong syncsStarted = new AtomicLong();
    ExecutorService disk = Executors.newSingleThreadExecutor();
    AtomicLong lastFinishedStart = new AtomicLong(); // sequence number of the latest finished sync
    GroupSync concurrent =
        new GroupSync(
            () -> {
              long mine = syncsStarted.incrementAndGet();
              return CompletableFuture.runAsync(
                  () -> {
                    sleepMicros(200);
                    lastFinishedStart.accumulateAndGet(mine, Math::max);
                  },
                  disk);
            },
            stats);
    ExecutorService writers = Executors.newFixedThreadPool(8);
    AtomicInteger violations = new AtomicInteger();
    List<CompletableFuture<Void>> confirmations = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      CompletableFuture<Void> confirmed = new CompletableFuture<>();
      confirmations.add(confirmed);
      writers.execute(
          () -> {
            long startedBeforeCommit = syncsStarted.get();
            concurrent
                .afterCommit()
                .whenComplete(
                    (ok, failure) -> {
                      if (failure != null || lastFinishedStart.get() <= startedBeforeCommit) {
                        violations.incrementAndGet();
                      }
                      confirmed.complete(null);
                    });
          });
    }
    CompletableFuture.allOf(confirmations.toArray(CompletableFuture[]::new))
        .get(30, TimeUnit.SECONDS);
    writers.shutdown();
    disk.shutdown();
    assertEquals(0, violations.get(), "confirmed without a sync that started after the commit");
    assertEquals(2000, stats.syncedWrites());
    assertTrue(stats.syncs() <= 2000, "never more syncs than writes: " + stats);
    assertTrue(stats.syncs() < 2000, "concurrent writes share syncs: " + stats);
  }

  private static void sleepMicros(long micros) {
    long end = System.nanoTime() + micros * 1000;
    while (System.nanoTime() < end) {
      Thread.onSpinWait();
    }
  }
}
