package dev.spendgateway.ledger.journal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;

/**
 * The journal's flush, handed to the ledger when the journal confirms writes at commit and leaves
 * the wait for the disk to the ledger ({@code ledger.journal.pipeline = on}).
 *
 * <p>Why: a journal that confirms a write only after its flush keeps the ledger's single writer
 * idle for the whole fsync; the next batch can be neither decided nor written until then. Confirmed
 * at commit, the ledger decides and writes the next batch at once, on a state that includes the
 * batch being flushed, and holds every answer until {@link #afterCommit()} says a flush covered it.
 * A flush forces everything committed before it, so an answer covers its own fact and every fact it
 * was decided after. A fact decided on an unflushed one is itself unflushed and unanswered, and a
 * caller acts on a fact (settles it) only once answered, so a power cut can cost only unanswered
 * facts; losing an accepted reservation only frees cap room for what was decided after it.
 *
 * <p>One per actor system (a Pekko extension) because the journal plugin creates its DAO
 * reflectively, out of the ledger's reach.
 */
public final class JournalFlush implements Extension {
  private static final Id ID = new Id();
  private static final CompletionStage<Void> NOTHING_TO_WAIT_FOR =
      CompletableFuture.completedFuture(null);

  private volatile GroupSync
      sync; // null: writes are confirmed only once flushed (or need no flush)

  /** The flush of {@code system} (a typed system: {@code system.classicSystem()}). */
  public static JournalFlush get(ActorSystem system) {
    return ID.get(system);
  }

  void handOver(GroupSync sync) {
    this.sync = sync;
  }

  /**
   * Whether a confirmed write may still be only in the OS's cache, so its answers must wait for
   * {@link #afterCommit()}.
   */
  public boolean answersWaitForFlush() {
    return sync != null;
  }

  /**
   * Call once a write was confirmed; completes when a flush that started after this call has
   * finished (so it certainly covered the write), at once when writes are confirmed flushed. Fails
   * when that flush failed.
   */
  public CompletionStage<Void> afterCommit() {
    GroupSync s = sync;
    return s == null ? NOTHING_TO_WAIT_FOR : s.afterCommit();
  }

  /**
   * Call once a write was confirmed that nobody waits to see flushed: no flush starts for it; the
   * next {@link #afterCommit()} covers it (a flush forces everything committed before it).
   */
  public void committedWithoutFlush() {
    GroupSync s = sync;
    if (s != null) {
      s.committedWithoutWaiting();
    }
  }

  private static final class Id extends AbstractExtensionId<JournalFlush> {
    @Override
    public JournalFlush createExtension(ExtendedActorSystem system) {
      return new JournalFlush();
    }
  }
}
