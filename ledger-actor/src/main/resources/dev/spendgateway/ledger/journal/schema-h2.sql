-- The ledger's journal tables in H2, as pekko-persistence-jdbc 1.1's default journal DAO, query
-- side and snapshot store read and write them (its current layout, not the pre-5.0 "journal"
-- table). JournalSchema runs this only when a table is missing; every statement is written so that
-- running it again leaves existing tables, rows and indexes alone. Statements end with a semicolon;
-- lines starting with two dashes are dropped before the script is split.
-- No durable_state table: the ledger is event sourced and uses no durable state store.

-- One row per journal write (a group commit of the ledger's facts), keyed by persistence id and
-- sequence number; "ordering" is the global order the read journal pages by.
CREATE TABLE IF NOT EXISTS PUBLIC."event_journal" (
  "ordering" BIGINT UNIQUE NOT NULL AUTO_INCREMENT,
  "deleted" BOOLEAN DEFAULT false NOT NULL,
  "persistence_id" VARCHAR(255) NOT NULL,
  "sequence_number" BIGINT NOT NULL,
  "writer" VARCHAR NOT NULL,
  "write_timestamp" BIGINT NOT NULL,
  "adapter_manifest" VARCHAR NOT NULL,
  "event_payload" BLOB NOT NULL,
  "event_ser_id" INTEGER NOT NULL,
  "event_ser_manifest" VARCHAR NOT NULL,
  "meta_payload" BLOB,
  "meta_ser_id" INTEGER,
  "meta_ser_manifest" VARCHAR,
  PRIMARY KEY ("persistence_id", "sequence_number")
);

CREATE UNIQUE INDEX IF NOT EXISTS "event_journal_ordering_idx" ON PUBLIC."event_journal" ("ordering");

-- Tags of journal rows. The ledger writes none, but the DAO's write and the read journal's
-- by-tag queries name this table, so it must exist.
CREATE TABLE IF NOT EXISTS PUBLIC."event_tag" (
  "event_id" BIGINT NOT NULL,
  "tag" VARCHAR NOT NULL,
  PRIMARY KEY ("event_id", "tag"),
  CONSTRAINT fk_event_journal
    FOREIGN KEY ("event_id")
    REFERENCES PUBLIC."event_journal" ("ordering")
    ON DELETE CASCADE
);

-- The ledger's snapshots (the state at a sequence number), read first on recovery.
CREATE TABLE IF NOT EXISTS PUBLIC."snapshot" (
  "persistence_id" VARCHAR(255) NOT NULL,
  "sequence_number" BIGINT NOT NULL,
  "created" BIGINT NOT NULL,
  "snapshot_ser_id" INTEGER NOT NULL,
  "snapshot_ser_manifest" VARCHAR NOT NULL,
  "snapshot_payload" BLOB NOT NULL,
  "meta_ser_id" INTEGER,
  "meta_ser_manifest" VARCHAR,
  "meta_payload" BLOB,
  PRIMARY KEY ("persistence_id", "sequence_number")
);
