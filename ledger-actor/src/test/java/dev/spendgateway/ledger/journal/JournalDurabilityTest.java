package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerSettings;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which configurations the ledger accepts: asking for a flushed journal must actually get one. */
class JournalDurabilityTest {
  private static final String DEFAULT_DAO =
      "org.apache.pekko.persistence.jdbc.journal.dao.DefaultJournalDao";

  @ParameterizedTest(name = "sync={0}, plugin={1}, dao={2} -> accepted={3}")
  @CsvSource(
      nullValues = "-",
      value = {
        // the shipped wiring: flush on, the durable DAO
        "on,  jdbc-journal, durable, true",
        // flush on but the plugin's own DAO would confirm writes still in the OS cache
        "on,  jdbc-journal, default, false",
        "on,  jdbc-journal, -,       false",
        // flush off: whatever DAO, the operator chose
        "off, jdbc-journal, default, true",
        "off, jdbc-journal, durable, true",
        // no ledger.journal.sync at all (in-memory test configs): nothing asked, nothing checked
        "-,   jdbc-journal, default, true",
        // another journal plugin answers for its own durability
        "on,  pekko.persistence.journal.inmem, -, true",
      })
  void aFlushRequestedIsAFlushWired(String sync, String plugin, String dao, boolean accepted) {
    Map<String, Object> values = new HashMap<>();
    if (sync != null) {
      values.put("ledger.journal.sync", sync);
    }
    values.put("pekko.persistence.journal.plugin", plugin);
    if (dao != null) {
      values.put("jdbc-journal.dao", dao.equals("durable") ? JournalDurability.DAO : DEFAULT_DAO);
    }
    Config config = ConfigFactory.parseMap(values);
    if (accepted) {
      assertDoesNotThrow(() -> JournalDurability.requireConsistent(config));
    } else {
      assertThrows(
          IllegalArgumentException.class, () -> JournalDurability.requireConsistent(config));
    }
  }

  @ParameterizedTest(name = "ledger.journal.sync={0} -> the DAO flushes: {1}")
  @CsvSource(
      nullValues = "-",
      value = {"on, true", "off, false", "-, true"})
  void theDaoFlushesUnlessTurnedOff(String sync, boolean flushes) {
    Config config =
        sync == null
            ? ConfigFactory.empty()
            : ConfigFactory.parseMap(Map.of("ledger.journal.sync", sync));
    org.junit.jupiter.api.Assertions.assertEquals(flushes, JournalDurability.syncRequested(config));
  }

  @Test
  void theLedgerRefusesToStartWhenTheFlushIsAskedForButNotWired() throws Exception {
    Config config =
        ConfigFactory.parseMap(
                Map.of(
                    "ledger.journal.sync", "on",
                    "pekko.persistence.journal.plugin", "jdbc-journal",
                    "jdbc-journal.dao", DEFAULT_DAO))
            .withFallback(ConfigFactory.parseResources("ledger-h2-file-test.conf"))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "durability-check", config);
    try {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> Ledger.spawn(system, LedgerSettings.fromConfig(config), Clock.systemUTC()));
      org.junit.jupiter.api.Assertions.assertTrue(
          e.getMessage().contains("jdbc-journal.dao"), e.getMessage());
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
