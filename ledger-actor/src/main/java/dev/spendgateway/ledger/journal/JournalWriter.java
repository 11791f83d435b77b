package dev.spendgateway.ledger.journal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ledger's journal writer: the one object through which a batch is committed, flushed, fenced
 * and counted, the same on the embedded H2 journal and on PostgreSQL. {@code GlobalBudget} and its
 * front ({@code ReservationBatcher}) are handed it when they are created; the journal's DAO commits
 * through it.
 *
 * <ul>
 *   <li><b>commit</b> ({@link #commit}): refused at once when the fence is closed; a refusal by the
 *       journal's key (another writer took the sequence number) closes it; a committed write is
 *       confirmed only after a flush that covers it, unless the ledger waits for the flush itself
 *       (the pipeline).
 *   <li><b>flush</b> ({@link #answersWaitForFlush}, {@link #afterCommit}, {@link
 *       #committedWithoutFlush}): one flush for every write committed while the previous flush ran
 *       ({@link GroupSync}); on H2 {@link H2Flush}; on PostgreSQL none, its commit is durable.
 *   <li><b>fence</b> ({@link #fence}): another ledger wrote first, so nothing this one decides may
 *       be written or answered until it recovers.
 *   <li><b>stats</b> ({@link #stats}): writes, flushes and their time, for metrics, bench and
 *       tests.
 * </ul>
 *
 * <p>Why it is found through the actor system ({@link #of}) and not passed in:
 * pekko-persistence-jdbc creates the DAO reflectively from configuration, so the DAO can reach
 * nothing else. That lookup is the only one; the ledger itself is handed the writer and never looks
 * anything up.
 */
public final class JournalWriter implements Extension {
  private static final Logger log = LoggerFactory.getLogger(JournalWriter.class);
  private static final Id ID = new Id();
  private static final CompletionStage<Void> NOTHING_TO_WAIT_FOR =
      CompletableFuture.completedFuture(null);

  private final JournalFence fence = new JournalFence();
  private final JournalSyncStats stats = new JournalSyncStats();

  /** The flush of everything committed so far; null: a commit is durable as it is (PostgreSQL). */
  private volatile GroupSync sync;

  /** Writes are confirmed at commit, and the ledger waits for their flush before answering. */
  private volatile boolean pipelined;

  /**
   * The sequence number of the one write the ledger said nobody waits to see flushed ({@link
   * #nextWriteWithoutFlush}); -1 when none. Taken (and reset) by the commit of that write only, so
   * no other write can be confirmed before its flush by mistake.
   */
  private final AtomicLong unflushedWrite = new AtomicLong(-1);

  /** A writer of its own, for a test that drives a ledger without a journal plugin. */
  public JournalWriter() {}

  /** The writer of {@code system}'s journal (a typed system: {@code system.classicSystem()}). */
  public static JournalWriter of(ActorSystem system) {
    return ID.get(system);
  }

  /**
   * Called by the journal's DAO when it is created: {@code flush} makes everything committed so far
   * durable; {@code pipelined}: confirm at commit and let the ledger wait for the flush.
   */
  void flushWith(Supplier<CompletionStage<?>> flush, boolean pipelined) {
    this.sync = new GroupSync(flush, stats);
    this.pipelined = pipelined;
  }

  /**
   * Commits one write ({@code insert}, which starts the journal's insert) through the fence; the
   * returned stage completes when the write may be confirmed: once flushed, or at commit when the
   * ledger waits for the flush itself or the commit is durable on its own.
   */
  <T> CompletionStage<T> commit(Supplier<CompletionStage<T>> insert) {
    return commit(insert, -1);
  }

  /**
   * As {@link #commit(Supplier)} for a write whose highest sequence number is {@code
   * highestSequenceNr}: the write the ledger announced with {@link #nextWriteWithoutFlush} is
   * confirmed at commit and starts no flush of its own.
   */
  <T> CompletionStage<T> commit(Supplier<CompletionStage<T>> insert, long highestSequenceNr) {
    boolean withoutFlush =
        highestSequenceNr >= 0 && unflushedWrite.compareAndSet(highestSequenceNr, -1);
    if (fence.isClosed()) {
      return CompletableFuture.failedFuture(
          new IllegalStateException("ledger journal fenced: another writer is ahead of this one"));
    }
    CompletionStage<T> committed = insert.get();
    committed.whenComplete(
        (ok, failure) -> {
          if (failure != null && JournalFence.isOtherWriter(failure)) {
            log.error(
                "ledger journal: another writer already wrote the next sequence number; this ledger is"
                    + " stale and stops writing");
            fence.close("another writer is ahead in the journal");
          }
        });
    GroupSync s = sync;
    if (s == null || pipelined || withoutFlush) {
      return committed;
    }
    // A failed commit needs no flush (and is failed as it is); a committed one waits for its flush.
    return committed.thenCompose(results -> s.afterCommit().thenApply(flushed -> results));
  }

  /**
   * Whether a confirmed write may still be only in the OS's cache, so its answers must wait for
   * {@link #afterCommit()}.
   */
  public boolean answersWaitForFlush() {
    return sync != null && pipelined;
  }

  /**
   * Call once a write was confirmed; completes when a flush that started after this call has
   * finished (so it certainly covered the write), at once when confirmed writes are durable
   * already. Fails when that flush failed.
   */
  public CompletionStage<Void> afterCommit() {
    return answersWaitForFlush() ? sync.afterCommit() : NOTHING_TO_WAIT_FOR;
  }

  /**
   * Whether a write may be confirmed at its commit with its flush left to the next one ({@link
   * #nextWriteWithoutFlush}): only where a flush exists (H2); on PostgreSQL every commit is durable
   * as it is.
   */
  public boolean flushMayWait() {
    return sync != null;
  }

  /**
   * The ledger's next write, at {@code sequenceNr}, is one nobody waits to see flushed (the
   * gateway's own settles and voids): it is confirmed at its commit, without the journal's
   * pipeline, and the next flush covers it. The ledger must then call {@link
   * #committedWithoutFlush} and make sure a flush follows ({@link #flushCommitted}).
   */
  public void nextWriteWithoutFlush(long sequenceNr) {
    if (flushMayWait()) {
      unflushedWrite.set(sequenceNr);
    }
  }

  /**
   * Forgets a write announced by {@link #nextWriteWithoutFlush} that never reached its commit (the
   * ledger restarted): the write that next takes its sequence number waits for its flush.
   */
  public void noWriteWithoutFlush() {
    unflushedWrite.set(-1);
  }

  /**
   * Call once a write was confirmed that nobody waits to see flushed: no flush starts for it; the
   * next {@link #afterCommit()} or {@link #flushCommitted()} covers it (a flush forces everything
   * committed before it).
   */
  public void committedWithoutFlush() {
    if (flushMayWait()) {
      sync.committedWithoutWaiting();
    }
  }

  /**
   * Completes when a flush that started after this call has finished, so every write committed so
   * far is on disk (one starts at once if none runs); at once where commits are durable as they
   * are. Counts no write: for the writes {@link #committedWithoutFlush} left behind.
   */
  public CompletionStage<Void> flushCommitted() {
    GroupSync s = sync;
    return s == null ? NOTHING_TO_WAIT_FOR : s.flushCommitted();
  }

  /** The fence against a second writer. */
  public JournalFence fence() {
    return fence;
  }

  /** What this journal wrote and flushed. */
  public JournalSyncStats stats() {
    return stats;
  }

  private static final class Id extends AbstractExtensionId<JournalWriter> {
    @Override
    public JournalWriter createExtension(ExtendedActorSystem system) {
      return new JournalWriter();
    }
  }
}
