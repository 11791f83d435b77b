package dev.spendgateway.ledger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.pekko.serialization.jackson.JacksonMigration;

/**
 * The schema versions of the ledger's journaled events and its snapshot, one migration per type,
 * registered in this module's {@code reference.conf}. Pekko writes the current version into each
 * serializer manifest ({@code ...Compacted#2}) and hands an older payload to {@link #transform}
 * first. An event also carries its version in its {@code v} field; when both are present the
 * payload's own {@code v} wins (it was written by the code that knew the shape).
 *
 * <p>To change a type's shape: bump its {@link #currentVersion}, add the step to {@link #upgrade},
 * keep a fixture journal of the old format with a recovery test (see {@code FixtureJournal*}).
 */
public abstract class LedgerSchemaMigration extends JacksonMigration {

  /** The version the payload says it has: its {@code v} field if present, else the manifest's. */
  static int writtenVersion(int manifestVersion, JsonNode json) {
    JsonNode v = json.get("v");
    return v != null && v.canConvertToInt() ? v.asInt() : manifestVersion;
  }

  @Override
  public final JsonNode transform(int fromVersion, JsonNode json) {
    int from = writtenVersion(fromVersion, json);
    JsonNode out = json;
    for (int v = from; v < currentVersion(); v++) {
      out = upgrade(v, out);
    }
    return out;
  }

  /** The payload of version {@code from} as version {@code from + 1}. */
  protected JsonNode upgrade(int from, JsonNode json) {
    return json;
  }

  /** Events whose shape has not changed since version 1 (fields added since read as absent). */
  public static final class Version1 extends LedgerSchemaMigration {
    @Override
    public int currentVersion() {
      return 1;
    }
  }

  /**
   * {@code Compacted} v2 split the one cutoff into the cap-window cutoff, {@code idsClosedBefore}
   * and {@code pastIdsBefore}. A v1 event forgot closed reservations at its cutoff: that is exactly
   * ids leaving the window at that cutoff, and no past-id filter to drop.
   */
  public static final class CompactedV2 extends LedgerSchemaMigration {
    @Override
    public int currentVersion() {
      return 2;
    }

    @Override
    protected JsonNode upgrade(int from, JsonNode json) {
      if (from == 1
          && json instanceof ObjectNode o
          && !o.has("idsClosedBefore")
          && o.has("cutoff")) {
        o.set("idsClosedBefore", o.get("cutoff"));
      }
      return json;
    }
  }

  /**
   * Snapshot v2 keeps open reservations as records and the window's ids packed ({@code recentIds},
   * {@code pastIds}); v1 kept every known reservation as a record. Nothing to rewrite: the snapshot
   * codec reads v1's closed records into the compact index (see {@link LedgerSnapshot#toState}).
   */
  public static final class SnapshotV2 extends LedgerSchemaMigration {
    @Override
    public int currentVersion() {
      return 2;
    }
  }
}
