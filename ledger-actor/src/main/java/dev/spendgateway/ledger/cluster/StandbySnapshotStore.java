package dev.spendgateway.ledger.cluster;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.journal.NewestSnapshotStore;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.persistence.SelectedSnapshot;
import org.apache.pekko.persistence.SnapshotMetadata;
import org.apache.pekko.persistence.SnapshotSelectionCriteria;
import scala.Option;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;

/**
 * The jdbc snapshot store of a cluster node, with one difference: when the ledger starts on this
 * node and its recovery asks for the latest snapshot, this node's {@link LedgerStandby} is asked
 * first, and its state (exactly the fold of the journal up to its row) is returned as a snapshot at
 * that row. The recovery then replays only the rows after it. Every other load (another persistence
 * id, a narrower selection, no standby that has caught up, the operator tools) and every save and
 * delete is {@link NewestSnapshotStore}'s (the plugin's, keeping only the newest snapshot).
 */
public class StandbySnapshotStore extends NewestSnapshotStore {
  private final LoggingAdapter log;

  public StandbySnapshotStore(Config config) {
    super(config);
    this.log = Logging.getLogger(context().system(), StandbySnapshotStore.class);
  }

  @Override
  public Future<Option<SelectedSnapshot>> loadAsync(
      String persistenceId, SnapshotSelectionCriteria criteria) {
    if (!persistenceId.equals(GlobalBudget.PERSISTENCE_ID.id())
        || !criteria.equals(SnapshotSelectionCriteria.latest())) {
      return super.loadAsync(persistenceId, criteria);
    }
    long started = System.nanoTime();
    return FutureConverters.asScala(
        LedgerStandby.get(context().system())
            .takeForRecovery()
            .thenCompose(
                caught -> {
                  if (caught.isEmpty()) {
                    return FutureConverters.asJava(super.loadAsync(persistenceId, criteria));
                  }
                  LedgerStandby.Caught c = caught.get();
                  log.info(
                      "ledger recovery starts from this node's standby at journal row {} (taken in"
                          + " {} ms): only the rows after it are replayed",
                      c.sequenceNr(),
                      (System.nanoTime() - started) / 1_000_000);
                  return java.util.concurrent.CompletableFuture.completedFuture(
                      Option.apply(
                          SelectedSnapshot.create(
                              new SnapshotMetadata(persistenceId, c.sequenceNr(), 0L), c.state())));
                }));
  }
}
