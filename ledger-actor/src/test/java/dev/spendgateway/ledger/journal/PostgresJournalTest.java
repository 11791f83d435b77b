package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.Eventually;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.PgLedger;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The ledger on a PostgreSQL journal: selected only when a URL is given, tables created if missing,
 * one row per group commit, recovery after a restart, and no start on a server whose commit is not
 * durable.
 */
class PostgresJournalTest {
  private static final long CENT = 10_000;

  @Test
  void withoutAUrlTheConfigurationIsUnchanged() {
    Config loaded = PgLedger.config("jdbc:postgresql://127.0.0.1:5432/x", Map.of());
    Config h2 =
        ConfigFactory.parseResources("ledger-postgres-test.conf")
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    assertSame(h2, PostgresJournal.select(h2));
    assertEquals(
        "slick.jdbc.PostgresProfile$", loaded.getString(PostgresJournal.SLICK_KEY + ".profile"));
    assertEquals(
        "jdbc:postgresql://127.0.0.1:5432/x",
        loaded.getString(PostgresJournal.SLICK_KEY + ".db.url"));
    assertFalse(loaded.getBoolean("ledger.journal.sync"), "the commit is the flush on PostgreSQL");
    assertFalse(
        loaded.hasPath(PostgresJournal.SLICK_KEY + ".db.password"),
        "an empty password is left to the driver");
  }

  @Test
  void aUrlOfAnotherDatabaseIsRefusedByName() {
    Config h2 =
        ConfigFactory.parseResources("ledger-postgres-test.conf")
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> PostgresJournal.select(h2, Optional.of("jdbc:mysql://db/ledger")));
    assertTrue(e.getMessage().contains("GATEWAY_JOURNAL_URL"), e.getMessage());
  }

  /**
   * The ledger snapshots by facts and the store keeps only the newest snapshot, on PostgreSQL as on
   * H2 (the cluster's standby store inherits the same save): a ledger running for months leaves one
   * snapshot row, not one per snapshot it ever took.
   */
  @Test
  void onlyTheNewestSnapshotIsKept() throws Exception {
    try (PgDatabase db = PgDatabase.create()) {
      try (PgLedger ledger = PgLedger.start(db.url, Map.of("ledger.snapshot-every", 10))) {
        for (int i = 0; i < 40; i++) { // one at a time: one fact per row
          assertInstanceOf(
              LedgerProtocol.Reserved.class,
              ledger
                  .client
                  .reserve(new ReserveRequest("s-" + i, Lane.FREE, null, CENT, 0, 0))
                  .toCompletableFuture()
                  .get(30, TimeUnit.SECONDS));
        }
        // Snapshots at rows 10, 20 and 39: from row 20 on, half the ids held is above 10 (at row
        // 39,
        // 19 facts since row 20 and 39 ids held, half of it 19).
        String where = " FROM snapshot WHERE persistence_id = 'global'";
        List<Long> countAndOldest =
            Eventually.until(
                "one snapshot row is kept, the newest (row 39)",
                Duration.ofSeconds(10),
                () ->
                    List.of(
                        db.number("SELECT count(*)" + where),
                        db.number("SELECT coalesce(min(sequence_number), 0)" + where)),
                seen -> seen.equals(List.of(1L, 39L)));
        assertEquals(1L, countAndOldest.get(0), "snapshot rows");
        assertEquals(39L, countAndOldest.get(1), "the one kept is the newest");
      }
    }
  }

  @Test
  void reservationsAreGroupCommittedAndRecoveredFromPostgres() throws Exception {
    try (PgDatabase db = PgDatabase.create()) {
      int callers = 200;
      try (PgLedger ledger = PgLedger.start(db.url, Map.of())) {
        List<CompletableFuture<LedgerProtocol.ReserveReply>> replies = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
          replies.add(
              ledger
                  .client
                  .reserve(new ReserveRequest("r-" + i, Lane.FREE, null, CENT, 0, 0))
                  .toCompletableFuture());
        }
        for (var reply : replies) {
          assertInstanceOf(LedgerProtocol.Reserved.class, reply.get(30, TimeUnit.SECONDS));
        }
      }
      long rows = db.number("SELECT count(*) FROM event_journal WHERE persistence_id = 'global'");
      assertTrue(
          rows >= 1 && rows < callers,
          "group commit: " + rows + " rows for " + callers + " reservations");

      // A second start on the same database (the schema step meets existing tables) recovers them
      // all.
      try (PgLedger again = PgLedger.start(db.url, Map.of())) {
        var usage =
            again.client.usage(Optional.empty()).toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertEquals(callers, usage.openReservations());
        assertInstanceOf(
            LedgerProtocol.ReservationView.class,
            again.client.get("r-" + (callers - 1)).toCompletableFuture().get(30, TimeUnit.SECONDS));
      }
    }
  }

  @Test
  void aServerWhoseCommitIsNotDurableIsRefused() throws Exception {
    try (PgDatabase db = PgDatabase.create()) {
      Config lax =
          PgLedger.config(db.url, Map.of())
              .withValue(
                  PostgresJournal.SLICK_KEY + ".db.connectionInitSql",
                  com.typesafe.config.ConfigValueFactory.fromAnyRef(
                      "SET synchronous_commit TO off"));
      var system =
          org.apache.pekko.actor.typed.ActorSystem.create(
              org.apache.pekko.actor.typed.javadsl.Behaviors.empty(), "lax-pg", lax);
      try {
        ExecutionException e =
            assertThrows(
                ExecutionException.class,
                () ->
                    PostgresJournal.requireDurableCommit(system)
                        .toCompletableFuture()
                        .get(30, TimeUnit.SECONDS));
        assertTrue(
            e.getCause().getMessage().contains("synchronous_commit = off"),
            e.getCause().getMessage());
      } finally {
        system.terminate();
        system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    }
  }
}
