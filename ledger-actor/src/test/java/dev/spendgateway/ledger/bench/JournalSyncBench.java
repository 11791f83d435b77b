package dev.spendgateway.ledger.bench;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.h2.mvstore.MVStore;
import org.h2.store.fs.FilePath;
import org.h2.store.fs.FilePathWrapper;

/**
 * How H2 (2.x, MVStore, {@code WRITE_DELAY=0}) can make one group commit durable, and what each way
 * costs per batch: a journal-shaped table, one transaction of N rows per batch, then
 *
 * <ul>
 *   <li>{@code commit only}: what the ledger did before: the commit writes the chunk to the OS
 *       (page cache) and H2 never calls {@code FileChannel.force} until a clean close;
 *   <li>{@code CHECKPOINT SYNC}: the SQL statement, on the same database after the commit: H2
 *       stores anything unsaved and forces the file ({@code Database.sync → MVStore.sync});
 *   <li>{@code MVStore.sync()}: the same force reached through H2's internal API (no SQL parse);
 *   <li>{@code O_DSYNC file}: a {@code FilePathWrapper} that opens the file with {@code DSYNC}, so
 *       every write H2 makes (chunk, and every so often the header) waits for the disk;
 *   <li>{@code STORE_AND_FORCE}: what the ledger ships ({@code H2Flush}): H2 with its background
 *       writer ({@code WRITE_DELAY=100}), then the MVStore's commit (the chunk) and one force;
 *   <li>{@code WAL_FDATASYNC}: the candidate for a cheaper flush: H2 as above but never forced per
 *       batch, and the batch's bytes appended to a preallocated write-ahead file beside it with one
 *       {@code force(false)} (fdatasync). Only the flush's cost: replaying the file into H2 at
 *       start, and teaching the operator tools about it, are not built.
 * </ul>
 *
 * Run: {@code java -cp <test classpath> dev.spendgateway.ledger.bench.JournalSyncBench [dir]
 * [batches]}.
 */
public final class JournalSyncBench {
  private JournalSyncBench() {}

  enum Option {
    COMMIT_ONLY,
    CHECKPOINT_SYNC,
    MVSTORE_SYNC,
    DSYNC_FILE,
    STORE_AND_FORCE,
    WAL_FDATASYNC
  }

  public static void main(String[] args) throws Exception {
    Path base = Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
    int batches = args.length > 1 ? Integer.parseInt(args[1]) : 300;
    FilePath.register(new DsyncFilePath());
    System.out.println("# before: " + FsyncProbe.summary(base));
    System.out.println(
        "| option | rows per batch | batch p50 ms | batch p99 ms | batch mean ms | forces |");
    System.out.println("|---|---:|---:|---:|---:|---|");
    for (int rows : new int[] {1, 256}) {
      // All options side by side, one batch each in turn (rotating who goes first), so a noisy
      // neighbour on a shared machine slows them alike instead of whichever ran during the noise.
      java.util.List<Journal> journals = new java.util.ArrayList<>();
      for (Option option : Option.values()) {
        journals.add(new Journal(Files.createTempDirectory(base, "journal-sync-bench"), option));
      }
      try {
        for (int b = 0; b < batches + 20; b++) {
          for (int j = 0; j < journals.size(); j++) {
            journals
                .get((b + j) % journals.size())
                .batch(rows, b >= 20); // the first 20 rounds warm up
          }
        }
        for (Journal journal : journals) {
          Histogram h = journal.micros;
          System.out.printf(
              "| %s | %d | %.3f | %.3f | %.3f | %s |%n",
              journal.option,
              rows,
              h.getValueAtPercentile(50) / 1000.0,
              h.getValueAtPercentile(99) / 1000.0,
              h.getMean() / 1000.0,
              switch (journal.option) {
                case COMMIT_ONLY -> "none";
                case DSYNC_FILE -> "every write waits";
                case WAL_FDATASYNC -> "1 fdatasync of the side file per batch";
                default -> "1 per batch";
              });
        }
      } finally {
        for (Journal journal : journals) {
          journal.close();
        }
      }
    }
    System.out.println("# after: " + FsyncProbe.summary(base));
  }

  /**
   * One H2 FILE database with a journal-shaped table, made durable per batch the {@link Option}
   * way.
   */
  static final class Journal implements AutoCloseable {
    final Option option;
    final Path dir;
    final Connection connection;
    final PreparedStatement insert;
    final Statement sync;
    final Histogram micros = new Histogram(TimeUnit.SECONDS.toMicros(10), 3);
    final byte[] payload = new byte[60]; // a CBOR ledger event is ~50-80 bytes
    long seq;

    /**
     * The write-ahead file ({@link Option#WAL_FDATASYNC} only), preallocated, and where to append.
     */
    FileChannel wal;

    long walAt;

    /** A journal row as the write-ahead file would hold it (ids, writer, manifest, payload). */
    static final int WAL_ROW_BYTES = 160;

    static final long WAL_BYTES = 64L << 20;

    Journal(Path dir, Option option) throws SQLException {
      this.option = option;
      this.dir = dir;
      String file = (option == Option.DSYNC_FILE ? "dsync:" : "") + dir.resolve("journal");
      boolean background = option == Option.STORE_AND_FORCE || option == Option.WAL_FDATASYNC;
      connection =
          DriverManager.getConnection(
              "jdbc:h2:"
                  + file
                  + ";DATABASE_TO_UPPER=false;WRITE_DELAY="
                  + (background ? "100" : "0"),
              "sa",
              "");
      if (option == Option.WAL_FDATASYNC) {
        wal = preallocated(dir.resolve("journal.wal"));
      }
      try (Statement s = connection.createStatement()) {
        s.execute(
            "CREATE TABLE event_journal (ordering BIGINT AUTO_INCREMENT, persistence_id VARCHAR(255) NOT NULL,"
                + " sequence_number BIGINT NOT NULL, writer VARCHAR(255) NOT NULL, event_ser_manifest VARCHAR(255),"
                + " event_payload BLOB NOT NULL, PRIMARY KEY (persistence_id, sequence_number))");
      }
      connection.setAutoCommit(false);
      insert =
          connection.prepareStatement(
              "INSERT INTO event_journal (persistence_id, sequence_number, writer, event_ser_manifest, event_payload)"
                  + " VALUES ('global', ?, '2f9a4c1e-0a7b-4d5e-9c33-7d1f6b2e8a90', 'dev.spendgateway.ledger.GlobalBudget$ReservationMade', ?)");
      sync = connection.createStatement();
    }

    void batch(int rows, boolean record) throws SQLException {
      long t0 = System.nanoTime();
      for (int r = 0; r < rows; r++) {
        insert.setLong(1, ++seq);
        insert.setBytes(2, payload);
        insert.addBatch();
      }
      insert.executeBatch();
      connection.commit();
      switch (option) {
        case CHECKPOINT_SYNC -> sync.execute("CHECKPOINT SYNC");
        case MVSTORE_SYNC ->
            ((SessionLocal) connection.unwrap(JdbcConnection.class).getSession())
                .getDatabase()
                .getStore()
                .getMvStore()
                .sync();
        case STORE_AND_FORCE -> {
          MVStore store =
              ((SessionLocal) connection.unwrap(JdbcConnection.class).getSession())
                  .getDatabase()
                  .getStore()
                  .getMvStore();
          store.commit();
          store.getFileStore().executeFileStoreOperation(() -> {});
          store.getFileStore().sync();
        }
        case WAL_FDATASYNC -> appendAndForce(rows);
        default -> {}
      }
      if (record) {
        micros.recordValue(
            Math.min((System.nanoTime() - t0) / 1000, TimeUnit.SECONDS.toMicros(10)));
      }
    }

    /** A file of {@link #WAL_BYTES} zeros, forced, so an append changes no file size. */
    private static FileChannel preallocated(Path path) {
      try {
        FileChannel channel =
            FileChannel.open(
                path, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE);
        java.nio.ByteBuffer zeros = java.nio.ByteBuffer.allocate(1 << 20);
        for (long at = 0; at < WAL_BYTES; at += zeros.capacity()) {
          zeros.clear();
          channel.write(zeros, at);
        }
        channel.force(true);
        return channel;
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    /** The batch's rows appended with a length and a checksum, then one fdatasync. */
    private void appendAndForce(int rows) {
      java.nio.ByteBuffer record = java.nio.ByteBuffer.allocate(16 + rows * WAL_ROW_BYTES);
      record.putLong(rows).putLong(seq);
      while (record.hasRemaining()) {
        record.put(payload, 0, Math.min(payload.length, record.remaining()));
      }
      record.flip();
      try {
        if (walAt + record.remaining() > WAL_BYTES) {
          walAt = 0; // a bench, not a journal: wrap instead of rolling over to a new file
        }
        while (record.hasRemaining()) {
          walAt += wal.write(record, walAt);
        }
        wal.force(false);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    @Override
    public void close() throws SQLException {
      if (wal != null) {
        try {
          wal.close();
        } catch (IOException e) {
          // scratch file, deleted below
        }
      }
      connection.close();
      LedgerBench.deleteTree(dir);
    }
  }

  /**
   * {@code dsync:} — the plain disk file opened with {@code O_DSYNC}: every write is on disk when
   * it returns.
   */
  public static final class DsyncFilePath extends FilePathWrapper {
    @Override
    public FileChannel open(String mode) throws IOException {
      if (!mode.contains("w")) {
        return getBase().open(mode);
      }
      return FileChannel.open(
          Path.of(getBase().toString()),
          StandardOpenOption.READ,
          StandardOpenOption.WRITE,
          StandardOpenOption.CREATE,
          StandardOpenOption.DSYNC);
    }

    @Override
    public String getScheme() {
      return "dsync";
    }
  }
}
