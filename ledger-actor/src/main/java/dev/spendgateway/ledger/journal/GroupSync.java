package dev.spendgateway.ledger.journal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Makes committed journal writes durable with as few syncs as possible and never one too few.
 *
 * <p>A write calls {@link #afterCommit()} once its transaction has committed; the returned stage
 * completes when a sync that <em>started after</em> that call has finished, so the sync certainly
 * covered the write. When no sync is running one starts at once. Writes that commit while a sync is
 * running cannot rely on it (it may have begun before their commit reached the file), so they all
 * share the next one, started as soon as the running one ends: group commit for the flush. A failed
 * sync fails exactly the writes it was to cover; the next group gets a fresh try.
 */
final class GroupSync {
  private final Supplier<CompletionStage<?>> sync;
  private final JournalSyncStats stats;
  private final Object lock = new Object();
  private boolean running;

  /** The writes waiting for the sync after the running one; null when none waits. */
  private Group waiting;

  /**
   * Writes committed since the last sync started that nobody waits for: the next sync to start
   * covers them (counted in its group for the stats).
   */
  private int unwaited;

  /**
   * {@code sync} starts one flush of everything committed so far and completes when it is on disk.
   */
  GroupSync(Supplier<CompletionStage<?>> sync, JournalSyncStats stats) {
    this.sync = sync;
    this.stats = stats;
  }

  /** Call once a write has committed; completes when a sync that covers it has finished. */
  CompletionStage<Void> afterCommit() {
    stats.writeCommitted();
    return nextSync(1);
  }

  /**
   * Completes when a sync that started after this call has finished, counting no write of its own:
   * it covers the writes {@link #committedWithoutWaiting} left for the next sync.
   */
  CompletionStage<Void> flushCommitted() {
    return nextSync(0);
  }

  private CompletionStage<Void> nextSync(int writes) {
    Group mine;
    boolean startNow;
    synchronized (lock) {
      if (waiting == null) {
        waiting = new Group();
      }
      mine = waiting;
      mine.writes += writes;
      startNow = !running;
      if (startNow) {
        running = true;
        waiting = null;
        mine.writes += unwaited;
        unwaited = 0;
      }
    }
    if (startNow) {
      start(mine);
    }
    return mine.done;
  }

  /**
   * Call once a write has committed that nobody waits to see flushed (a gateway's own settle or
   * void): it starts no sync and is covered by the next one anybody asks for.
   */
  void committedWithoutWaiting() {
    synchronized (lock) {
      unwaited++;
    }
    stats.writeCommitted();
  }

  private void start(Group group) {
    long t0 = System.nanoTime();
    CompletionStage<?> flush;
    try {
      flush = sync.get();
    } catch (RuntimeException e) {
      flush = CompletableFuture.failedFuture(e);
    }
    flush.whenComplete(
        (ignored, failure) -> {
          Group next;
          synchronized (lock) {
            next = waiting;
            waiting = null;
            running = next != null;
            if (next != null) {
              next.writes += unwaited;
              unwaited = 0;
            }
          }
          if (next != null) {
            start(next); // the next flush is under way before this group's callers are answered
          }
          stats.synced(group.writes, System.nanoTime() - t0, failure == null);
          if (failure == null) {
            group.done.complete(null);
          } else {
            group.done.completeExceptionally(failure);
          }
        });
  }

  /** The writes one sync covers. */
  private static final class Group {
    final CompletableFuture<Void> done = new CompletableFuture<>();
    int writes; // guarded by GroupSync.lock until the group's sync starts
  }
}
