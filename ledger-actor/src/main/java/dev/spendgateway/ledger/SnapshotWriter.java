package dev.spendgateway.ledger;

import java.time.Clock;
import java.util.Optional;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.persistence.Persistence;
import org.apache.pekko.persistence.SaveSnapshotFailure;
import org.apache.pekko.persistence.SaveSnapshotSuccess;
import org.apache.pekko.persistence.SnapshotMetadata;
import org.apache.pekko.persistence.SnapshotProtocol;

/**
 * Writes the ledger's snapshots beside it, so that the single writer never waits for one. Pekko's
 * own snapshotting holds every command back (stashed) and the answers of the row that made it due
 * until the snapshot store has serialized and written the whole state: 1.4 s for 400,000 ids on
 * this project's bench machine, and a snapshot grows with the idempotency window (hundreds of MB
 * for a day of ids), so every reserve would wait seconds, past its callers' ask timeout.
 *
 * <p>The ledger hands over its state after a row once that row is flushed ({@link Save}); the state
 * is immutable but for parts only later rows append to, which {@link LedgerState#forSnapshot}
 * leaves out of the copy it hands over. The snapshot is saved through the configured snapshot
 * store, at that row's sequence number, exactly as Pekko would have saved it; recovery reads it as
 * before. One save at a time: a snapshot that falls due while one is being written replaces any
 * other waiting (the newest is the only one worth writing). A failed save is logged and costs only
 * a longer replay, as a snapshot is never needed for correctness. A snapshot the heap has no room
 * for now ({@link SnapshotHeadroom}) is skipped with a warning, for the same reason: running out of
 * heap in the middle of the write would close the journal's database.
 */
final class SnapshotWriter extends AbstractBehavior<Object> {

  /** The ledger's state after journal row {@code sequenceNr}, {@code factsSince} after the last. */
  record Save(long sequenceNr, LedgerState state, long factsSince) {}

  private final org.apache.pekko.actor.ActorRef store;
  private final org.apache.pekko.actor.ActorRef self;
  private final Clock clock;
  private final SnapshotHeadroom headroom;
  private final LedgerObserver observer;
  private Save writing;
  private long writingSince;
  private Save waiting;

  static Behavior<Object> create(Clock clock, LedgerObserver observer) {
    return create(clock, SnapshotHeadroom.ofThisJvm(), observer);
  }

  static Behavior<Object> create(Clock clock, SnapshotHeadroom headroom, LedgerObserver observer) {
    return Behaviors.setup(context -> new SnapshotWriter(context, clock, headroom, observer));
  }

  private SnapshotWriter(
      ActorContext<Object> context,
      Clock clock,
      SnapshotHeadroom headroom,
      LedgerObserver observer) {
    super(context);
    this.headroom = headroom;
    this.observer = observer;
    // The snapshot store the ledger recovers from: the configured default, as GlobalBudget names
    // no plugin of its own.
    this.store =
        Persistence.get(Adapter.toClassic(context.getSystem()))
            .snapshotStoreFor("", com.typesafe.config.ConfigFactory.empty());
    this.self = Adapter.toClassic(context.getSelf());
    this.clock = clock;
  }

  @Override
  public Receive<Object> createReceive() {
    return newReceiveBuilder()
        .onMessage(Save.class, this::onSave)
        .onMessage(SaveSnapshotSuccess.class, this::onSaved)
        .onMessage(SaveSnapshotFailure.class, this::onFailed)
        .build();
  }

  private Behavior<Object> onSave(Save save) {
    if (writing == null) {
      write(save);
    } else {
      waiting = save;
    }
    return this;
  }

  private void write(Save save) {
    Optional<String> shortfall = headroom.shortfall(save.state());
    if (shortfall.isPresent()) {
      getContext()
          .getLog()
          .warn(
              "ledger snapshot at journal row {} skipped: {}; recovery replays from the previous"
                  + " one, and the next snapshot tries again",
              save.sequenceNr(),
              shortfall.get());
      observe(LedgerObserver.SnapshotOutcome.SKIPPED, save.sequenceNr());
      next();
      return;
    }
    writing = save;
    writingSince = System.nanoTime();
    SnapshotMetadata metadata =
        new SnapshotMetadata(GlobalBudget.PERSISTENCE_ID.id(), save.sequenceNr(), clock.millis());
    // The store's own request, as Pekko's snapshotting sends it (the typed API has no way to save
    // a snapshot without stopping the actor that takes it).
    store.tell(new SnapshotProtocol.SaveSnapshot(metadata, save.state()), self);
  }

  private Behavior<Object> onSaved(SaveSnapshotSuccess saved) {
    getContext()
        .getLog()
        .info(
            "ledger snapshot at journal row {} written in {} ms beside the ledger: {} reservation"
                + " ids, {} facts since the previous one",
            saved.metadata().sequenceNr(),
            (System.nanoTime() - writingSince) / 1_000_000,
            writing.state().knownReservations(),
            writing.factsSince());
    observe(LedgerObserver.SnapshotOutcome.WRITTEN, saved.metadata().sequenceNr());
    return next();
  }

  private Behavior<Object> onFailed(SaveSnapshotFailure failed) {
    getContext()
        .getLog()
        .warn(
            "ledger snapshot at journal row {} was not written ({}); recovery replays from the"
                + " previous one, and the next snapshot tries again",
            failed.metadata().sequenceNr(),
            failed.cause().toString());
    observe(LedgerObserver.SnapshotOutcome.FAILED, failed.metadata().sequenceNr());
    return next();
  }

  /** Metrics must never stop snapshots: whatever the observer throws is logged and dropped. */
  private void observe(LedgerObserver.SnapshotOutcome outcome, long sequenceNr) {
    try {
      observer.snapshot(outcome, sequenceNr);
    } catch (RuntimeException e) {
      getContext().getLog().warn("ledger observer failed: {}", e.toString());
    }
  }

  private Behavior<Object> next() {
    writing = null;
    if (waiting != null) {
      Save save = waiting;
      waiting = null;
      write(save);
    }
    return this;
  }
}
