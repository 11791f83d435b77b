package dev.spendgateway.edge.ops;

import dev.spendgateway.ledger.audit.JournalReader;
import dev.spendgateway.ledger.audit.Journaled;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fills a {@link SpendPerHour} from the journal at start, reading only the rows of the hours it
 * keeps. Rows are written in time order, so the first row inside the window is found by a binary
 * search over sequence numbers (one single-row read per step, about 30 for a billion rows) instead
 * of reading a journal that may hold months of facts from its first row.
 */
public final class JournalSpendRebuild {
  private static final Logger log = LoggerFactory.getLogger(JournalSpendRebuild.class);

  private final JournalReader journal;
  private final Materializer materializer;

  public JournalSpendRebuild(ActorSystem<?> system) {
    this.journal = new JournalReader(system);
    this.materializer = Materializer.matFromSystem(system);
  }

  /**
   * Reads the window's rows into {@code series}; completes when done (failures are logged, not
   * thrown).
   */
  public CompletionStage<Void> run(SpendPerHour series) {
    Instant cutoff = series.cutoff();
    return journal
        .lastSequenceNr()
        .thenCompose(last -> firstRowAtOrAfter(cutoff, 1, last))
        .thenCompose(
            from ->
                journal
                    .current(from)
                    .runWith(Sink.foreach(j -> series.rebuild(j.event())), materializer))
        .handle(
            (done, failure) -> {
              if (failure != null) {
                log.warn(
                    "the spend-per-hour series could not be rebuilt from the journal ({}); it shows spend from now on",
                    failure.toString());
              }
              series.rebuildDone();
              return null;
            });
  }

  /**
   * The smallest sequence number in {@code [lo, hi]} whose row happened at or after {@code cutoff};
   * {@code hi + 1} (nothing to read) when no row does.
   */
  private CompletionStage<Long> firstRowAtOrAfter(Instant cutoff, long lo, long hi) {
    if (lo > hi) {
      return CompletableFuture.completedFuture(lo);
    }
    long mid = lo + (hi - lo) / 2;
    return rowTime(mid)
        .thenCompose(
            at -> {
              if (at.isEmpty() || !at.get().isBefore(cutoff)) {
                return firstRowAtOrAfter(cutoff, lo, mid - 1);
              }
              return firstRowAtOrAfter(cutoff, mid + 1, hi);
            });
  }

  /** When row {@code sequenceNr} (or the next one present, when it was deleted) happened. */
  private CompletionStage<Optional<Instant>> rowTime(long sequenceNr) {
    return journal
        .current(sequenceNr)
        .take(1)
        .runWith(Sink.headOption(), materializer)
        .thenApply(first -> first.map(Journaled::event).map(e -> e.at()));
  }
}
