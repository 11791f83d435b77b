package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Schema evolution, second format: the committed journal written with compaction v2 and snapshot v2
 * (see {@link FixtureJournalV2}) recovers to the same {@code /usage} and answers every repeated id
 * as it did when written: the same reply inside the idempotency window, id_reused past it. The
 * first format is covered by {@code audit.FixtureJournalV1Test}. Never regenerate the fixture to
 * make this pass: add a migration ({@link LedgerSchemaMigration}).
 */
class FixtureJournalV2Test {
  @TempDir Path dataDir;

  @BeforeEach
  void copyFixture() throws Exception {
    Files.copy(
        Path.of(getClass().getResource("/fixtures/journal-v2/ledger.mv.db").toURI()),
        dataDir.resolve("ledger.mv.db"));
  }

  private static List<String> expected(String name) throws Exception {
    return Files.readAllLines(
        Path.of(FixtureJournalV2Test.class.getResource("/fixtures/journal-v2/" + name).toURI()));
  }

  @Test
  void holdsTheVersionedManifests() throws Exception {
    Set<String> manifests = new HashSet<>();
    String url = "jdbc:h2:file:" + dataDir.toAbsolutePath() + "/ledger;DATABASE_TO_UPPER=false";
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        Statement s = c.createStatement()) {
      try (ResultSet rs =
          s.executeQuery("SELECT DISTINCT \"event_ser_manifest\" FROM \"event_journal\"")) {
        while (rs.next()) {
          manifests.add(rs.getString(1));
        }
      }
      try (ResultSet rs =
          s.executeQuery("SELECT DISTINCT \"snapshot_ser_manifest\" FROM \"snapshot\"")) {
        while (rs.next()) {
          manifests.add(rs.getString(1));
        }
      }
    }
    assertTrue(
        manifests.contains("dev.spendgateway.ledger.LedgerEvents$Compacted#2"),
        manifests.toString());
    assertTrue(manifests.contains("dev.spendgateway.ledger.LedgerState#2"), manifests.toString());
  }

  @Test
  void theLedgerRecoversFromItWithTheSameAnswers() throws Exception {
    Map<String, Object> overrides = new HashMap<>(FixtureJournalV2.OVERRIDES);
    overrides.put("ledger.create-schema", "off");
    try (H2Ledger ledger =
        H2Ledger.start(dataDir, overrides, new TestClock(FixtureJournalV2.END))) {
      assertEquals(
          expected("usage-end.txt"),
          FixtureJournalV1.lines(FixtureJournalV2.get(ledger.client.usage(Optional.empty()))));
      assertEquals(expected("answers-end.txt"), FixtureJournalV2.answers(ledger.client));
    }
  }
}
