package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.journal.JournalDurability;
import dev.spendgateway.policy.caps.CapLimits;
import java.io.File;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The shipped conf/ledger.conf parses into the documented defaults and points H2 at the data dir.
 */
class LedgerSettingsTest {
  private static Config shipped(Map<String, Object> overrides) {
    return ConfigFactory.parseMap(overrides)
        .withFallback(ConfigFactory.parseFile(new File("../conf/ledger.conf")))
        .resolve();
  }

  @Test
  void defaultsAreTheSpecCaps() {
    LedgerSettings s = LedgerSettings.fromConfig(shipped(Map.of()));
    assertEquals(new CapLimits(40_000_000, 600_000_000, 3_000_000, 25_000_000, 600_000), s.caps());
    assertEquals(Duration.ofMinutes(15), s.reservationTimeout());
    assertEquals(1000, s.maxBatch());
    assertEquals(100_000, s.snapshotEvery());
    assertEquals(1_000_000_000, s.maxAdjustmentMicros()); // 1000 USD per credit or adjustment
    assertTrue(s.createSchema());
  }

  @Test
  void aSettleIsBoundedAtTenTimesItsReserveAndTheQueueAtTwentyBatches() {
    LedgerSettings s = LedgerSettings.fromConfig(shipped(Map.of()));
    assertEquals(10, s.maxSettleMultiple());
    assertEquals(20_000, s.maxQueuedCommands());
    assertEquals(
        3,
        LedgerSettings.fromConfig(shipped(Map.of("ledger.max-settle-multiple", 3)))
            .maxSettleMultiple());
  }

  @Test
  void windowsAreUtcDaysUnlessAZoneIsConfigured() {
    assertEquals(
        java.time.ZoneId.of("UTC"), LedgerSettings.fromConfig(shipped(Map.of())).windowZone());
    assertEquals(
        java.time.ZoneId.of("Europe/Berlin"),
        LedgerSettings.fromConfig(shipped(Map.of("ledger.window-zone", "Europe/Berlin")))
            .windowZone());
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "ledger.window-zone = \"{0}\" is refused")
  @org.junit.jupiter.params.provider.ValueSource(
      strings = {"Europe/Berlni", "CET+1", "+03:00", "UTC+3", ""})
  void aWindowZoneThatIsNotAnIanaZoneIsRefusedAtStartNamingKeyAndValue(String zone) {
    IllegalArgumentException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class,
            () -> LedgerSettings.fromConfig(shipped(Map.of("ledger.window-zone", zone))));
    assertEquals(
        "ledger.window-zone must be an IANA zone id such as UTC or Europe/Berlin, not \""
            + zone
            + "\"",
        e.getMessage());
  }

  @Test
  void aQueueShorterThanOneBatchIsRefusedAtStart() {
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class,
        () -> LedgerSettings.fromConfig(shipped(Map.of("ledger.max-queued-commands", 999))));
  }

  @Test
  void theJournalIsAnH2FileUnderTheDataDir() {
    Config c = shipped(Map.of("gateway.data-dir", "/var/lib/gw"));
    assertEquals(
        "jdbc:h2:file:/var/lib/gw/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE;WRITE_DELAY=100",
        c.getString("pekko-persistence-jdbc.shared-databases.slick.db.url"));
    assertEquals("jdbc-journal", c.getString("pekko.persistence.journal.plugin"));
    assertEquals("slick", c.getString("jdbc-journal.use-shared-db"));
  }

  @Test
  void theShippedJournalFlushesEachWriteToDisk() {
    Config c = shipped(Map.of());
    assertTrue(c.getBoolean("ledger.journal.sync"));
    assertEquals(JournalDurability.DAO, c.getString("jdbc-journal.dao"));
    JournalDurability.requireConsistent(c); // the ledger would refuse to start otherwise
  }
}
