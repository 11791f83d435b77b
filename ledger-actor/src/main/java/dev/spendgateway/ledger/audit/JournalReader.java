package dev.spendgateway.ledger.audit;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.pattern.Patterns;
import org.apache.pekko.persistence.Persistence;
import org.apache.pekko.persistence.SelectedSnapshot;
import org.apache.pekko.persistence.SnapshotProtocol;
import org.apache.pekko.persistence.SnapshotSelectionCriteria;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Reads the ledger's journal (persistence id {@code global}) and its latest snapshot through the
 * configured pekko-persistence-jdbc plugins, read-only: the query side of the same database the
 * gateway writes (H2 with {@code AUTO_SERVER=TRUE} lets both open the file at once).
 */
public final class JournalReader {
  private static final String PERSISTENCE_ID = GlobalBudget.PERSISTENCE_ID.id();

  private final ActorSystem<?> system;
  private final JdbcReadJournal journal;

  public JournalReader(ActorSystem<?> system) {
    this.system = system;
    this.journal =
        PersistenceQuery.get(Adapter.toClassic(system))
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
  }

  /**
   * Every fact in the journal now, from the row {@code fromSequenceNr} on; completes at the end. A
   * group-commit row comes out as its facts, in order.
   */
  public Source<Journaled, NotUsed> current(long fromSequenceNr) {
    return namingTheRow(
        journal.currentEventsByPersistenceId(PERSISTENCE_ID, fromSequenceNr, Long.MAX_VALUE),
        fromSequenceNr);
  }

  /**
   * The rows as facts; a row that cannot be read (a damaged block, a hand edit) fails the stream
   * naming where: the plugin's error (Jackson's message) names no row, and the rows come in order,
   * so it is the one after the last read.
   */
  private static Source<Journaled, NotUsed> namingTheRow(
      Source<EventEnvelope, NotUsed> rows, long fromSequenceNr) {
    java.util.concurrent.atomic.AtomicLong lastRead =
        new java.util.concurrent.atomic.AtomicLong(fromSequenceNr - 1);
    return rows.map(
            envelope -> {
              lastRead.set(envelope.sequenceNr());
              return envelope;
            })
        .mapError(
            new scala.PartialFunction<Throwable, Throwable>() {
              @Override
              public boolean isDefinedAt(Throwable e) {
                return true;
              }

              @Override
              public Throwable apply(Throwable e) {
                return new IllegalStateException(
                    "the journal row after sequence number "
                        + lastRead.get()
                        + " cannot be read ("
                        + dev.spendgateway.ledger.ops.JournalDatabase.firstLine(e)
                        + "); rows up to "
                        + lastRead.get()
                        + " were read",
                    e);
              }
            })
        .mapConcat(JournalReader::facts);
  }

  /**
   * As {@link #current}, then every new fact as it is written (polled every refresh-interval);
   * never completes.
   */
  public Source<Journaled, NotUsed> live(long fromSequenceNr) {
    return namingTheRow(
        journal.eventsByPersistenceId(PERSISTENCE_ID, fromSequenceNr, Long.MAX_VALUE),
        fromSequenceNr);
  }

  /** The highest sequence number in the journal now; 0 when it is empty. */
  public java.util.concurrent.CompletionStage<Long> lastSequenceNr() {
    return journal
        .currentLastSequenceNumberByPersistenceId(PERSISTENCE_ID)
        .thenApply(last -> last.orElse(0L));
  }

  /** A snapshot of the ledger state and the sequence number it was taken at. */
  public record Snapshot(long sequenceNr, LedgerState state) {}

  /**
   * The latest snapshot in the snapshot store, loaded by the store plugin itself (same
   * deserialization as the ledger's recovery).
   */
  public Optional<Snapshot> latestSnapshot(Duration timeout) throws Exception {
    return latestSnapshotAsync(timeout)
        .toCompletableFuture()
        .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** As {@link #latestSnapshot}, without blocking. */
  public java.util.concurrent.CompletionStage<Optional<Snapshot>> latestSnapshotAsync(
      Duration timeout) {
    String pluginId =
        system.settings().config().getString("pekko.persistence.snapshot-store.plugin");
    ActorRef store =
        Persistence.get(Adapter.toClassic(system))
            .snapshotStoreFor(pluginId, com.typesafe.config.ConfigFactory.empty());
    return Patterns.ask(
            store,
            new SnapshotProtocol.LoadSnapshot(
                PERSISTENCE_ID, SnapshotSelectionCriteria.latest(), Long.MAX_VALUE),
            timeout)
        .thenApply(JournalReader::snapshotOf);
  }

  private static Optional<Snapshot> snapshotOf(Object reply) {
    if (reply instanceof SnapshotProtocol.LoadSnapshotResult result) {
      if (result.snapshot().isEmpty()) {
        return Optional.empty();
      }
      SelectedSnapshot selected = result.snapshot().get();
      return Optional.of(
          new Snapshot(selected.metadata().sequenceNr(), (LedgerState) selected.snapshot()));
    }
    if (reply instanceof SnapshotProtocol.LoadSnapshotFailed failed) {
      throw new IllegalStateException("cannot load the latest snapshot", failed.cause());
    }
    throw new IllegalStateException("unexpected snapshot store reply " + reply);
  }

  /**
   * The facts of one journal row, each with the row's sequence number; the last one ends the row.
   */
  static List<Journaled> facts(EventEnvelope envelope) {
    List<Event> facts = GroupCommit.factsOf((Event) envelope.event());
    List<Journaled> out = new ArrayList<>(facts.size());
    for (int i = 0; i < facts.size(); i++) {
      out.add(new Journaled(envelope.sequenceNr(), facts.get(i), i == facts.size() - 1));
    }
    return out;
  }
}
