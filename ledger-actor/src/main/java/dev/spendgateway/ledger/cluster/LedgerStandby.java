package dev.spendgateway.ledger.cluster;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.ledger.audit.JournalReader;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * A warm copy of the ledger's state on every cluster node that does not hold the ledger, so that a
 * take-over does not replay the books. Without it the next node rebuilds the state from the latest
 * snapshot and every journal row after it, on a JIT that never ran the fold: 8-10 s for ~400k
 * reservation ids, on top of the failure detection and the split-brain decision, all of it 503s.
 *
 * <p>It loads the latest snapshot once, then follows the journal (the read journal's live query,
 * polled every {@code jdbc-read-journal.refresh-interval}) and folds every row with the ledger's
 * own event handler ({@link LedgerState#applied}), so its state is exactly what a recovery to the
 * same sequence number would build. When the ledger starts on this node, its recovery asks the
 * snapshot store for the latest snapshot; {@link StandbySnapshotStore} then hands it this state as
 * the snapshot at its sequence number (this copy stops following the journal at that moment: from
 * then on the ledger is its only writer), and the ledger replays only the rows written after it.
 *
 * <p>It never offers a state it cannot vouch for: not before it has caught up with the journal as
 * it was when it started, and never after a row it did not expect (a gap or a repeat in the
 * sequence numbers makes it throw its state away and start over). Whenever it has nothing to offer,
 * the ledger recovers from the snapshot store and journal as it always did, so a standby can only
 * make a recovery shorter, never different.
 *
 * <p>It costs every node the ledger's memory (a node must be sized for it anyway: any node may take
 * the ledger over) and the fold of every row, a small part of what deciding them cost.
 */
public final class LedgerStandby implements Extension {

  /** The state after the journal row {@code sequenceNr} (0: before the first). */
  public record Caught(LedgerState state, long sequenceNr) {

    /**
     * The state after {@code row}, which must be the next row. Anything else means rows were missed
     * or read twice, and a state folded from them would be wrong.
     */
    Caught next(EventEnvelope row) {
      if (row.sequenceNr() != sequenceNr + 1) {
        throw new IllegalStateException(
            "the journal gave row "
                + row.sequenceNr()
                + " after row "
                + sequenceNr
                + "; the standby starts over");
      }
      return new Caught(state.applied((Event) row.event()), row.sequenceNr());
    }
  }

  private static final Id ID = new Id();

  private final ExtendedActorSystem system;
  private final LoggingAdapter log;

  /** Set once the ledger has started on this node: no standby here from then on. */
  private boolean ledgerHere;

  /** The ledger's next recovery on this node may take the standby's state (armed by its start). */
  private boolean handOverArmed;

  /** The standby following the journal now, or null. */
  private Run run;

  /** How the latest hand-over went (for tests and the log): its sequence number, or empty. */
  private volatile Optional<Long> handedOver = Optional.empty();

  private LedgerStandby(ExtendedActorSystem system) {
    this.system = system;
    this.log = Logging.getLogger(system, LedgerStandby.class);
  }

  public static LedgerStandby get(ActorSystem system) {
    return ID.get(system);
  }

  /**
   * Starts following the journal, unless the ledger runs here or a standby already runs. Restarts
   * by itself {@code restartPause} after a failure (a gap, a database error).
   */
  public synchronized void start(Duration restartPause) {
    if (ledgerHere || run != null || system.whenTerminated().isCompleted()) {
      return;
    }
    Run started = new Run(restartPause);
    run = started;
    started.begin();
  }

  /**
   * The ledger is starting on this node: its recovery may take the standby's state, once, and no
   * standby starts here again.
   */
  public synchronized void ledgerStartsHere() {
    ledgerHere = true;
    handOverArmed = true;
  }

  /**
   * For the ledger's recovery: the standby's state if the ledger is starting here and the standby
   * has caught up (it stops following the journal), else empty (the recovery reads the snapshot
   * store as usual). Any other reader of the snapshot store gets empty.
   */
  CompletionStage<Optional<Caught>> takeForRecovery() {
    Run taken;
    synchronized (this) {
      if (!handOverArmed) {
        return CompletableFuture.completedFuture(Optional.empty());
      }
      handOverArmed = false;
      taken = run;
      run = null;
    }
    if (taken == null) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    return taken
        .surrender()
        .thenApply(
            caught -> {
              caught.ifPresent(c -> handedOver = Optional.of(c.sequenceNr()));
              return caught;
            });
  }

  /** The sequence number of the latest state handed to a recovery here, if any. */
  public Optional<Long> handedOver() {
    return handedOver;
  }

  /** Whether a standby has caught up with the journal and follows it now. */
  public synchronized boolean following() {
    return run != null && run.live;
  }

  /** The sequence number the standby has folded up to (0 when none runs). */
  public synchronized long position() {
    return run == null ? 0 : run.position;
  }

  /** One pass: the latest snapshot, then the journal from the row after it, until it stops. */
  private final class Run {
    private final Duration restartPause;
    private final long startedNanos = System.nanoTime();

    /** Whether it has folded every row that was in the journal when it started. */
    private volatile boolean live;

    private volatile long position;
    private volatile boolean surrendered;
    private UniqueKillSwitch killSwitch;
    private CompletionStage<Caught> folded;

    Run(Duration restartPause) {
      this.restartPause = restartPause;
    }

    void begin() {
      JdbcReadJournal journal =
          PersistenceQuery.get(system)
              .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
      String pid = GlobalBudget.PERSISTENCE_ID.id();
      CompletionStage<Caught> fromSnapshot = latestSnapshot();
      fromSnapshot
          .thenCompose(
              start ->
                  journal
                      .currentLastSequenceNumberByPersistenceId(pid)
                      .thenApply(last -> follow(journal, pid, start, last.orElse(0L))))
          .thenCompose(done -> done)
          .whenComplete(this::ended);
    }

    /**
     * Folds the journal's rows after {@code start}; live once row {@code lastAtStart} is folded.
     */
    private CompletionStage<Caught> follow(
        JdbcReadJournal journal, String pid, Caught start, long lastAtStart) {
      synchronized (LedgerStandby.this) {
        if (surrendered) {
          return CompletableFuture.completedFuture(start);
        }
        position = start.sequenceNr();
        if (lastAtStart <= start.sequenceNr()) {
          becameLive(start);
        }
        var running =
            journal
                .eventsByPersistenceId(pid, start.sequenceNr() + 1, Long.MAX_VALUE)
                .viaMat(KillSwitches.single(), Keep.right())
                .toMat(
                    Sink.fold(
                        start,
                        (Caught caught, EventEnvelope row) -> {
                          Caught next = caught.next(row);
                          position = next.sequenceNr();
                          if (!live && next.sequenceNr() >= lastAtStart) {
                            becameLive(next);
                          }
                          return next;
                        }),
                    Keep.both())
                .run(system);
        killSwitch = running.first();
        folded = running.second();
        return folded;
      }
    }

    private void becameLive(Caught caught) {
      live = true;
      log.info(
          "ledger standby caught up in {} ms at journal row {} ({} reservation ids known, {} open);"
              + " a take-over by this node starts from it",
          (System.nanoTime() - startedNanos) / 1_000_000,
          caught.sequenceNr(),
          caught.state().knownReservations(),
          caught.state().openReservations());
    }

    /** Stops following; the state folded so far if it had caught up, else empty. */
    CompletionStage<Optional<Caught>> surrender() {
      CompletionStage<Caught> result;
      synchronized (LedgerStandby.this) {
        surrendered = true;
        if (killSwitch == null) {
          return CompletableFuture.completedFuture(Optional.empty()); // still loading the snapshot
        }
        killSwitch.shutdown();
        result = folded;
      }
      if (!live) {
        return CompletableFuture.completedFuture(Optional.empty());
      }
      // The fold completes with the last row it took once the kill switch has ended the stream;
      // from then on nothing else touches that state.
      return result.handle(
          (caught, failure) -> failure == null ? Optional.of(caught) : Optional.empty());
    }

    private void ended(Caught caught, Throwable failure) {
      if (surrendered) {
        return;
      }
      synchronized (LedgerStandby.this) {
        if (run == this) {
          run = null;
        }
      }
      log.warning(
          "ledger standby stopped ({}); starting over in {}",
          failure == null ? "the journal query ended" : failure.toString(),
          restartPause);
      try {
        system
            .scheduler()
            .scheduleOnce(
                scala.concurrent.duration.Duration.fromNanos(restartPause.toNanos()),
                () -> start(restartPause),
                system.dispatcher());
      } catch (IllegalStateException shuttingDown) {
        // The scheduler refuses new tasks once the system stops: nothing to follow any more.
      }
    }

    /** The latest snapshot (the store plugin's own decoding), or the empty state. */
    private CompletionStage<Caught> latestSnapshot() {
      return new JournalReader(Adapter.toTyped(system))
          .latestSnapshotAsync(Duration.ofMinutes(2))
          .thenApply(
              snapshot ->
                  snapshot
                      .map(s -> new Caught(s.state(), s.sequenceNr()))
                      .orElse(new Caught(LedgerState.empty(), 0)));
    }
  }

  private static final class Id extends AbstractExtensionId<LedgerStandby> {
    @Override
    public LedgerStandby createExtension(ExtendedActorSystem system) {
      return new LedgerStandby(system);
    }
  }
}
