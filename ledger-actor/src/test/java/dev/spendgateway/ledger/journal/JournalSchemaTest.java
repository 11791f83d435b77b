package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import slick.jdbc.H2Profile$;
import slick.jdbc.MySQLProfile$;
import slick.jdbc.PostgresProfile$;

/**
 * The durable DAO writes the plugin's current tables, so the schema step must create those — not
 * the pre-5.0 layout the plugin's own tool picks for any DAO whose name is not its default.
 */
class JournalSchemaTest {
  @Test
  void h2GetsTheCurrentLayout() {
    String ddl = JournalSchema.createScript(H2Profile$.MODULE$);
    assertTrue(ddl.contains("\"event_journal\""), ddl);
    assertTrue(ddl.contains("\"snapshot_ser_id\""), "the current snapshot table: " + ddl);
    assertFalse(ddl.contains("\"journal\" ("), "not the legacy table: " + ddl);
  }

  @Test
  void postgresGetsTheCurrentLayout() {
    assertTrue(JournalSchema.createScript(PostgresProfile$.MODULE$).contains("event_journal"));
  }

  @Test
  void otherDatabasesAreRefusedByName() {
    assertThrows(
        IllegalArgumentException.class, () -> JournalSchema.createScript(MySQLProfile$.MODULE$));
  }
}
