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
 *       every write H2 makes (chunk, and every so often the header) waits for the disk.
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
    DSYNC_FILE
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

    Journal(Path dir, Option option) throws SQLException {
      this.option = option;
      this.dir = dir;
      String file = (option == Option.DSYNC_FILE ? "dsync:" : "") + dir.resolve("journal");
      connection =
          DriverManager.getConnection(
              "jdbc:h2:" + file + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0", "sa", "");
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
        default -> {}
      }
      if (record) {
        micros.recordValue(
            Math.min((System.nanoTime() - t0) / 1000, TimeUnit.SECONDS.toMicros(10)));
      }
    }

    @Override
    public void close() throws SQLException {
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
