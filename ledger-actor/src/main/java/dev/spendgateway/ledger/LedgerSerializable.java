package dev.spendgateway.ledger;

/**
 * Marker for everything the ledger journals, snapshots or may send across nodes (events, state,
 * commands, replies). Bound to pekko-serialization-jackson's {@code jackson-cbor} serializer in
 * this module's {@code reference.conf}; Java serialization stays off.
 */
public interface LedgerSerializable {}
