package dev.spendgateway.ledger;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.pekko.serialization.jackson.JacksonMigration;

/**
 * Reads journals and snapshots written before the ledger's events and state moved out of {@code
 * GlobalBudget}: their serializer manifests name {@code GlobalBudget$ReservationMade}, {@code
 * GlobalBudget$State} and so on. Registered for each old name in this module's {@code
 * reference.conf}; only the class name changes, the JSON is read as it was written.
 *
 * <p>Version 2 here is this migration's own counter (a manifest without a version is read as 1, so
 * every old manifest goes through {@link #transformClassName}); it is unrelated to the events'
 * {@code v} field.
 */
public final class LedgerClassRenames extends JacksonMigration {
  private static final String OLD_PREFIX = "dev.spendgateway.ledger.GlobalBudget$";

  @Override
  public int currentVersion() {
    return 2;
  }

  @Override
  public String transformClassName(int fromVersion, String className) {
    return renamed(className);
  }

  @Override
  public JsonNode transform(int fromVersion, JsonNode json) {
    return json;
  }

  /** The class an old manifest's class name now is. */
  static String renamed(String className) {
    if (!className.startsWith(OLD_PREFIX)) {
      return className;
    }
    String simple = className.substring(OLD_PREFIX.length());
    return simple.equals("State")
        ? LedgerState.class.getName()
        : LedgerEvents.class.getName() + "$" + simple;
  }
}
