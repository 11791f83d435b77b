package dev.spendgateway.ledger.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.FixtureJournalV1;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.TestClock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Schema evolution: the committed journal written by the first released event format (v1, {@code
 * src/test/resources/fixtures/journal-v1}, see {@link FixtureJournalV1}) must keep replaying to the
 * {@code /usage} the ledger answered when it was written — through the audit tools and through the
 * ledger's own recovery (snapshot + events). Never regenerate the fixture to make this pass: add a
 * Jackson migration instead (docs/OPERATIONS.md).
 */
class FixtureJournalV1Test {
  /**
   * Event types added after the v1 fixture was written. Each needs its own fixture version (its
   * events written by that version's writer and replayed here); the media job events are covered by
   * MediaJobLedgerTest's restart from journal and from snapshot until one exists; {@code
   * WindowZoneChanged} by WindowZoneLedgerTest's recoveries and EventSerializationTest (a v1
   * journal holds none and replays as UTC, which this test proves); the regional allowance
   * transfers (never written by a single-region ledger) by AllowanceTransfersTest (fold and
   * snapshot), EventSerializationTest (their CBOR form), AllowanceAuditTest (verify) and
   * operator-cli's AllowanceVerifyTest (a journal holding them imported, replayed and verified).
   */
  private static final java.util.Set<String> AFTER_V1 =
      java.util.Set.of(
          "MediaJobOpened",
          "MediaJobSubmitted",
          "WindowZoneChanged",
          "AllowanceOut",
          "AllowanceIn");

  @TempDir Path dataDir;

  @BeforeEach
  void copyFixture() throws Exception {
    Files.copy(
        Path.of(
            FixtureJournalV1Test.class.getResource("/fixtures/journal-v1/ledger.mv.db").toURI()),
        dataDir.resolve("ledger.mv.db"));
  }

  private static List<String> expected(String name) throws Exception {
    return Files.readAllLines(
        Path.of(FixtureJournalV1Test.class.getResource("/fixtures/journal-v1/" + name).toURI()));
  }

  @Test
  void replaysToTheRecordedUsageAtBothInstants() throws Exception {
    Config config = H2Ledger.config(dataDir, Map.of("ledger.create-schema", "off"));
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fixture-replay", config);
    try {
      JournalReader reader = new JournalReader(system);
      var caps = LedgerSettings.fromConfig(config).caps();
      LedgerAudit midway =
          AuditRuns.replay(
                  system,
                  reader.current(1),
                  Optional.of(FixtureJournalV1.MIDWAY),
                  new LedgerAudit(caps),
                  Progress.silent())
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      assertEquals(
          expected("usage-midway.txt"),
          FixtureJournalV1.lines(midway.usage(FixtureJournalV1.MIDWAY)));

      LedgerAudit end =
          AuditRuns.replay(
                  system,
                  reader.current(1),
                  Optional.empty(),
                  new LedgerAudit(caps),
                  Progress.silent())
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      assertEquals(
          expected("usage-end.txt"), FixtureJournalV1.lines(end.usage(FixtureJournalV1.END)));
      // v1 SpendAdjusted events rebuild the adjustment-id memory (compaction keeps it).
      assertEquals(
          List.of("alice", "bob"),
          List.of(
              end.state().adjustment("adj-1").orElseThrow().operator(),
              end.state().adjustment("adj-2").orElseThrow().operator()));

      // Every event type of v1 is in the fixture, and every one still verifies, snapshot included
      // (a v1 snapshot has no adjustment ids: the same books, remembering fewer ids).
      List<String> types =
          reader
              .current(1)
              .map(Journaled::type)
              .runWith(Sink.seq(), system)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      for (Class<?> type : GlobalBudget.Event.class.getPermittedSubclasses()) {
        if (type == GlobalBudget.GroupCommit.class) {
          continue; // a row shape added after v1 (readers expand it to facts), not a fact type
        }
        if (AFTER_V1.contains(type.getSimpleName())) {
          continue; // facts added after v1: a v1 journal cannot hold them
        }
        assertTrue(types.contains(type.getSimpleName()), "fixture lacks " + type.getSimpleName());
      }
      var snapshot = reader.latestSnapshot(java.time.Duration.ofSeconds(30));
      assertTrue(snapshot.isPresent(), "fixture has a snapshot");
      Optional<Violation> violation =
          AuditRuns.verify(
                  system, reader.current(1), snapshot, new LedgerAudit(caps), Progress.silent())
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      assertEquals(Optional.empty(), violation);
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void theLedgerRecoversFromItToTheSameState() throws Exception {
    Instant end = FixtureJournalV1.END;
    try (H2Ledger ledger = H2Ledger.start(dataDir, Map.of(), new TestClock(end))) {
      GlobalBudget.Usage usage =
          ledger.client.usage(Optional.empty()).toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertEquals(expected("usage-end.txt"), FixtureJournalV1.lines(usage));
    }
  }
}
