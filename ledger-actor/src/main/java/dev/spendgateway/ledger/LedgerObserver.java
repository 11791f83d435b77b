package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerEvents.Event;
import java.time.Duration;
import java.util.List;

/**
 * Told what the ledger did, for metrics. Called on the ledger's threads (the ledger's own, or its
 * snapshot writer's) only after the events are durable in the journal (never from an event handler,
 * never during recovery), so an implementation must be quick, must not block and must be safe to
 * call from two threads; anything it throws is logged and ignored.
 */
public interface LedgerObserver {
  /** Observes nothing: the default for callers that do not collect metrics. */
  LedgerObserver NONE = new LedgerObserver() {};

  /**
   * One journal write completed.
   *
   * @param events the events of the write, in order (a group commit holds many)
   * @param writeTime from asking the journal to write to its confirmation
   */
  default void persisted(List<Event> events, Duration writeTime) {}

  /**
   * The ledger finished recovering from its latest snapshot and the journal after it.
   *
   * @param took from the ledger actor's start to the end of recovery
   */
  default void recovered(Duration took, int knownReservations, int openReservations) {}

  /**
   * The ledger could not recover (its journal schema could not be created, or reading the snapshot
   * or the journal failed). {@code retrying}: it will be restarted and try again; false: it
   * stopped.
   */
  default void recoveryFailed(Throwable cause, boolean retrying) {}

  /**
   * The writer dropped {@code commands} whose callers' deadlines had passed, writing nothing for
   * them (a stalled or overloaded journal shows here first).
   */
  default void droppedPastDeadline(int commands) {}

  /**
   * The batcher answered {@code commands} busy at once because its queue was full ({@code
   * ledger.max-queued-commands}); none was decided.
   */
  default void shed(int commands) {}

  /** What became of a snapshot that fell due. */
  enum SnapshotOutcome {
    /** Saved in the snapshot store: recovery starts from it. */
    WRITTEN,
    /**
     * Not attempted: the heap had no room for it, or it would be larger than one snapshot row can
     * hold. Recovery replays from the previous one; many in a row mean the heap is too small for
     * the idempotency window.
     */
    SKIPPED,
    /** Attempted, and the snapshot store failed. */
    FAILED;

    /** The label value in metrics. */
    public String wireName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * A snapshot that fell due after journal row {@code sequenceNr} was written, skipped or failed
   * (the log says why).
   */
  default void snapshot(SnapshotOutcome outcome, long sequenceNr) {}
}
