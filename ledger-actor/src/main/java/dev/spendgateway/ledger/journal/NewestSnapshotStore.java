package dev.spendgateway.ledger.journal;

import com.typesafe.config.Config;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.persistence.SelectedSnapshot;
import org.apache.pekko.persistence.SnapshotMetadata;
import org.apache.pekko.persistence.SnapshotSelectionCriteria;
import org.apache.pekko.persistence.jdbc.snapshot.JdbcSnapshotStore;
import scala.Option;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;
import scala.runtime.BoxedUnit;

/**
 * The jdbc snapshot store, keeping only the newest snapshot of each persistence id: once a snapshot
 * is saved, the older ones are deleted. The ledger takes its snapshots by facts written (Pekko's
 * own retention, which deletes old snapshots, only follows its every-N-rows rule), and an older
 * snapshot is never read: recovery loads the newest, and one that cannot be loaded is skipped for a
 * full replay of the journal (which is never deleted), not for the one before it. Stateless, so a
 * restart between two snapshots leaves nothing behind.
 *
 * <p>A failed delete is logged and leaves the older snapshots for the next save; the save itself
 * has succeeded. A failed load is logged as a WARN with its cause: Pekko's own line for the
 * fallback to a full replay names neither the cause nor what to do, at INFO.
 */
public class NewestSnapshotStore extends JdbcSnapshotStore {
  private final LoggingAdapter log;

  public NewestSnapshotStore(Config config) {
    super(config);
    this.log = Logging.getLogger(context().system(), NewestSnapshotStore.class);
  }

  @Override
  public Future<Option<SelectedSnapshot>> loadAsync(
      String persistenceId, SnapshotSelectionCriteria criteria) {
    Future<Option<SelectedSnapshot>> loaded = super.loadAsync(persistenceId, criteria);
    loaded
        .failed()
        .foreach(
            failure -> {
              warnNotLoaded(persistenceId, failure);
              return BoxedUnit.UNIT;
            },
            context().dispatcher());
    return loaded;
  }

  private void warnNotLoaded(String persistenceId, Throwable failure) {
    log.warning(
        "the newest snapshot of {} could not be loaded ({}); recovery replays the whole journal"
            + " instead, which ends in the same books (events are never deleted) and only takes"
            + " longer. {}",
        persistenceId,
        failure.toString(),
        outOfHeap(failure)
            ? "The heap is too small to load it: raise -Xmx in JAVA_OPTS (about 250 bytes per"
                + " reservation id the ledger holds, plus 64 MB); until then every start replays"
                + " the whole journal"
            : "The next snapshot replaces it");
  }

  /** Whether {@code failure} is, or was caused by, running out of heap. */
  static boolean outOfHeap(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof OutOfMemoryError) {
        return true;
      }
    }
    return false;
  }

  @Override
  public Future<BoxedUnit> saveAsync(SnapshotMetadata metadata, Object snapshot) {
    CompletionStage<BoxedUnit> savedThenPruned =
        FutureConverters.asJava(super.saveAsync(metadata, snapshot))
            .thenCompose(saved -> deleteOlderThan(metadata));
    return FutureConverters.asScala(savedThenPruned);
  }

  private CompletionStage<BoxedUnit> deleteOlderThan(SnapshotMetadata saved) {
    if (saved.sequenceNr() <= 1) {
      return CompletableFuture.completedFuture(BoxedUnit.UNIT);
    }
    SnapshotSelectionCriteria older =
        SnapshotSelectionCriteria.create(saved.sequenceNr() - 1, Long.MAX_VALUE);
    return FutureConverters.asJava(deleteAsync(saved.persistenceId(), older))
        .exceptionally(
            failure -> {
              log.warning(
                  "snapshots of {} older than sequence number {} were not deleted ({}); the next"
                      + " snapshot tries again",
                  saved.persistenceId(),
                  saved.sequenceNr(),
                  failure.toString());
              return BoxedUnit.UNIT;
            });
  }
}
