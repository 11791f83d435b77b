package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LoggingTestKit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A snapshot that cannot be loaded does not stop the ledger: recovery replays the whole journal
 * (with a WARN naming the persistence id and the cause) and ends in the same books, every id still
 * answered as before. Without the fallback the ledger never becomes ready: its supervisor retries
 * the same unreadable snapshot forever.
 */
class SnapshotFallbackTest {
  @TempDir Path dataDir;

  private static final Map<String, Object> SMALL_SNAPSHOTS = Map.of("ledger.snapshot-every", 10);

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a corrupt payload | UPDATE \"snapshot\" SET \"snapshot_payload\" = X'00ff00ff' | Exception",
        "a class that no longer exists | UPDATE \"snapshot\" SET \"snapshot_ser_manifest\" = 'dev.spendgateway.ledger.Gone' | Gone",
      })
  void recoveryFallsBackToAFullReplay(String what, String corruption, String causeInLog)
      throws Exception {
    List<ReserveReply> first = new ArrayList<>();
    Usage before;
    try (H2Ledger ledger = H2Ledger.start(dataDir, SMALL_SNAPSHOTS)) {
      for (int i = 0; i < 25; i++) {
        first.add(
            get(
                ledger.client.reserve(
                    new ReserveRequest("fb-" + i, Lane.FREE, null, 50_000, 0, 0))));
        if (i % 2 == 0) {
          get(ledger.client.settle("fb-" + i, 20_000));
        }
      }
      before = get(ledger.client.usage(Optional.empty()));
    }
    assertTrue(corrupt(corruption) > 0, "the test needs a snapshot row to corrupt");

    ActorTestKit logs = ActorTestKit.create();
    H2Ledger restarted;
    try {
      restarted =
          LoggingTestKit.warn("the newest snapshot of global could not be loaded (")
              .withMessageContains(causeInLog)
              .withMessageContains("The next snapshot replaces it")
              .expect(logs.system(), () -> startOrFail());
    } finally {
      logs.shutdownTestKit();
    }
    try (H2Ledger ledger = restarted) {
      assertEquals(
          FixtureJournalV1.lines(before),
          FixtureJournalV1.lines(get(ledger.client.usage(Optional.empty()))));
      for (int i = 0; i < 25; i++) {
        assertEquals(
            first.get(i),
            get(
                ledger.client.reserve(
                    new ReserveRequest("fb-" + i, Lane.FREE, null, 50_000, 0, 0))));
      }
    }
  }

  /** Starts the ledger on {@link #dataDir}, waiting until it answers. */
  private H2Ledger startOrFail() {
    try {
      H2Ledger ledger = H2Ledger.start(dataDir, SMALL_SNAPSHOTS);
      get(ledger.client.usage(Optional.empty()));
      return ledger;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private int corrupt(String sql) throws Exception {
    String url =
        "jdbc:h2:file:"
            + dataDir.toAbsolutePath()
            + "/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE";
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        Statement s = c.createStatement()) {
      try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM \"snapshot\"")) {
        rs.next();
        if (rs.getInt(1) == 0) {
          return 0;
        }
      }
      return s.executeUpdate(sql);
    }
  }

  private static <T> T get(java.util.concurrent.CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
