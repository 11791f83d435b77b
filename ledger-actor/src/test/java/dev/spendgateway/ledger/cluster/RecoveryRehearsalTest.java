package dev.spendgateway.ledger.cluster;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.actor.testkit.typed.javadsl.LoggingTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Props;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The read-only recovery a cluster node runs at start, under the ledger's own persistence id, next
 * to a live ledger: it reads the snapshot and the events after it, stops by itself, and writes
 * nothing, so the live ledger is never fenced by it and keeps deciding.
 */
class RecoveryRehearsalTest {
  @TempDir Path dataDir;

  @Test
  void readsTheLedgerAfterItsSnapshotStopsAndLeavesTheLiveLedgerWriting() throws Exception {
    // A snapshot every 3 events: the rehearsal starts from one and replays only what follows it.
    try (H2Ledger ledger = H2Ledger.start(dataDir, Map.of("ledger.snapshot-every", 3))) {
      // The snapshot is written beside the ledger, after its row is answered: wait for it, or a
      // cold JVM's rehearsal can start before it is saved and replay everything.
      LoggingTestKit.info("ledger snapshot at journal row 3 written")
          .expect(
              ledger.system,
              () -> {
                try {
                  for (int i = 1; i <= 5; i++) {
                    reserve(ledger, "r-" + i);
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
                return null;
              });

      CompletableFuture<String> said = new CompletableFuture<>();
      ActorRef<RecoveryRehearsal.Stop> rehearsal =
          ledger.system.systemActorOf(
              RecoveryRehearsal.create(said::complete), "rehearsal", Props.empty());
      String line = said.get(30, TimeUnit.SECONDS);
      Matcher events = Pattern.compile("rehearsed in \\d+ ms \\((\\d+) events after").matcher(line);
      assertTrue(events.find(), line);
      int replayed = Integer.parseInt(events.group(1));
      assertTrue(replayed >= 1 && replayed < 5, "only the events after the snapshot: " + line);
      TestProbe.create(ledger.system).expectTerminated(rehearsal, Duration.ofSeconds(10));

      // Had it written anything, the live ledger's next write would be refused as a stale writer's.
      reserve(ledger, "r-6");
      reserve(ledger, "r-7");
    }
  }

  private static void reserve(H2Ledger ledger, String id) throws Exception {
    assertInstanceOf(
        LedgerProtocol.Reserved.class,
        ledger
            .client
            .reserve(new ReserveRequest(id, Lane.FREE, null, 10_000, 0, 0))
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS));
  }
}
