package dev.spendgateway.ledger.audit;

import dev.spendgateway.ledger.audit.JournalReader.Snapshot;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/** The replay and verify runs over a stream of journaled events (the journal, or an export). */
public final class AuditRuns {
  private AuditRuns() {}

  /**
   * Folds every event up to {@code until} (inclusive; all when empty) into {@code audit}.
   *
   * @return the same audit, once the stream has ended
   */
  public static CompletionStage<LedgerAudit> replay(
      ActorSystem<?> system,
      Source<Journaled, NotUsed> events,
      Optional<Instant> until,
      LedgerAudit audit,
      Progress progress) {
    return upTo(events, until)
        .runWith(
            Sink.foreach(
                j -> {
                  audit.apply(j);
                  progress.tick();
                }),
            system)
        .thenApply(done -> audit);
  }

  /**
   * Checks every event (see {@link LedgerAudit}) and, at the snapshot's sequence number, the
   * totals; stops at the first violation.
   */
  public static CompletionStage<Optional<Violation>> verify(
      ActorSystem<?> system,
      Source<Journaled, NotUsed> events,
      Optional<Snapshot> snapshot,
      LedgerAudit audit,
      Progress progress) {
    AtomicReference<Violation> first = new AtomicReference<>();
    long snapshotAt = snapshot.map(Snapshot::sequenceNr).orElse(-1L);
    return events
        .takeWhile(j -> first.get() == null)
        .runWith(
            Sink.foreach(
                j -> {
                  Optional<Violation> broken = audit.accept(j);
                  // A snapshot covers its whole row: with a group commit, compare after the row's
                  // last fact.
                  if (broken.isEmpty() && j.sequenceNr() == snapshotAt && j.endsRow()) {
                    broken = audit.checkSnapshot(snapshotAt, snapshot.get().state(), j.type());
                  }
                  broken.ifPresent(first::set);
                  progress.tick();
                }),
            system)
        .thenApply(done -> Optional.ofNullable(first.get()));
  }

  private static Source<Journaled, NotUsed> upTo(
      Source<Journaled, NotUsed> events, Optional<Instant> until) {
    return until.map(t -> events.takeWhile(j -> !j.event().at().isAfter(t))).orElse(events);
  }
}
