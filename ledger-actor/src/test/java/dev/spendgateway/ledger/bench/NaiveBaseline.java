package dev.spendgateway.ledger.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * The naive way: each reservation is one H2 transaction that locks the cap rows with {@code SELECT
 * … FOR UPDATE}, checks headroom, bumps them and inserts the reservation; each settle is another.
 * Same H2 FILE settings as the ledger (WRITE_DELAY=0), one connection per caller thread, and as
 * durable as the ledger: with the journal flush on, each commit is followed by {@code CHECKPOINT
 * SYNC} before the caller goes on.
 */
final class NaiveBaseline {
  private NaiveBaseline() {}

  /**
   * {@code sync}: each commit is followed by H2's {@code CHECKPOINT SYNC}, as durable as the
   * ledger's answers.
   */
  static LedgerBench.Result run(int callers, int warmupSeconds, int seconds, boolean sync)
      throws Exception {
    Path dir = Files.createTempDirectory("naive-bench");
    String url =
        "jdbc:h2:file:"
            + dir.resolve("naive")
            + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0;LOCK_TIMEOUT=60000";
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE caps (cap_key VARCHAR(200) PRIMARY KEY, limit_micros BIGINT NOT NULL,"
              + " settled_micros BIGINT NOT NULL, reserved_micros BIGINT NOT NULL)");
      s.execute(
          "CREATE TABLE reservations (id VARCHAR(128) PRIMARY KEY, brand VARCHAR(128) NOT NULL,"
              + " amount_micros BIGINT NOT NULL, status VARCHAR(16) NOT NULL, actual_micros BIGINT)");
      String day = LocalDate.now(ZoneOffset.UTC).toString();
      String month = day.substring(0, 7);
      try (PreparedStatement p = c.prepareStatement("INSERT INTO caps VALUES (?, ?, 0, 0)")) {
        insertCap(p, "global_daily:" + day);
        insertCap(p, "global_monthly:" + month);
        for (int b = 0; b < 100; b++) {
          insertCap(p, "brand_daily:brand-" + b + ":" + day);
          insertCap(p, "brand_monthly:brand-" + b + ":" + month);
        }
      }
    }

    ConcurrentHistogram latency = new ConcurrentHistogram(TimeUnit.SECONDS.toMicros(60), 3);
    AtomicLong pairs = new AtomicLong();
    AtomicLong errors = new AtomicLong();
    AtomicLong ids = new AtomicLong();
    AtomicBoolean measuring = new AtomicBoolean(false);
    AtomicBoolean running = new AtomicBoolean(true);
    List<Thread> threads = new java.util.ArrayList<>();
    for (int t = 0; t < callers; t++) {
      String brand = "brand-" + (t % 100);
      Thread thread =
          new Thread(
              () -> callerLoop(url, brand, ids, latency, pairs, errors, measuring, running, sync));
      thread.start();
      threads.add(thread);
    }
    Thread.sleep(warmupSeconds * 1000L); // time is the point: the warm-up window
    latency.reset();
    pairs.set(0);
    errors.set(0);
    measuring.set(true);
    long start = System.nanoTime();
    Thread.sleep(seconds * 1000L); // time is the point: the measured window
    long done = pairs.get();
    double elapsed = (System.nanoTime() - start) / 1e9;
    measuring.set(false);
    var snapshot = latency.copy();
    long errs = errors.get();
    running.set(false);
    for (Thread thread : threads) {
      thread.join(120_000);
    }
    LedgerBench.deleteTree(dir);
    return new LedgerBench.Result(
        "naive SELECT FOR UPDATE",
        callers,
        done,
        elapsed,
        snapshot,
        errs,
        sync ? "fsync after every commit" : "no fsync");
  }

  private static void insertCap(PreparedStatement p, String key) throws SQLException {
    p.setString(1, key);
    p.setLong(2, 1_000_000_000_000_000L);
    p.executeUpdate();
  }

  private static void callerLoop(
      String url,
      String brand,
      AtomicLong ids,
      ConcurrentHistogram latency,
      AtomicLong pairs,
      AtomicLong errors,
      AtomicBoolean measuring,
      AtomicBoolean running,
      boolean sync) {
    String day = LocalDate.now(ZoneOffset.UTC).toString();
    List<String> keys =
        List.of(
            "global_daily:" + day,
            "global_monthly:" + day.substring(0, 7),
            "brand_daily:" + brand + ":" + day,
            "brand_monthly:" + brand + ":" + day.substring(0, 7));
    try (Connection c = DriverManager.getConnection(url, "sa", "")) {
      c.setAutoCommit(false);
      while (running.get()) {
        String id = "bench-" + ids.incrementAndGet();
        long t0 = System.nanoTime();
        try {
          reserve(c, keys, id, brand, 10_000);
          flush(c, sync);
          if (measuring.get()) {
            latency.recordValue(
                Math.min((System.nanoTime() - t0) / 1000, TimeUnit.SECONDS.toMicros(60)));
          }
          settle(c, keys, id, 5_000);
          flush(c, sync);
          pairs.incrementAndGet();
        } catch (SQLException e) {
          errors.incrementAndGet();
          c.rollback();
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The committed transaction to disk, as the ledger's journal does before answering. */
  private static void flush(Connection c, boolean sync) throws SQLException {
    if (sync) {
      try (Statement s = c.createStatement()) {
        s.execute("CHECKPOINT SYNC");
      }
    }
  }

  /** One transaction: lock the cap rows (in a fixed order), check, hold, record. */
  private static void reserve(Connection c, List<String> keys, String id, String brand, long amount)
      throws SQLException {
    try (PreparedStatement lock =
        c.prepareStatement(
            "SELECT cap_key, limit_micros - settled_micros - reserved_micros FROM caps WHERE cap_key IN (?, ?, ?, ?)"
                + " ORDER BY cap_key FOR UPDATE")) {
      for (int i = 0; i < 4; i++) {
        lock.setString(i + 1, keys.get(i));
      }
      try (ResultSet rs = lock.executeQuery()) {
        while (rs.next()) {
          if (rs.getLong(2) < amount) {
            c.rollback();
            throw new SQLException("refused by " + rs.getString(1));
          }
        }
      }
    }
    try (PreparedStatement hold =
        c.prepareStatement(
            "UPDATE caps SET reserved_micros = reserved_micros + ? WHERE cap_key IN (?, ?, ?, ?)")) {
      hold.setLong(1, amount);
      for (int i = 0; i < 4; i++) {
        hold.setString(i + 2, keys.get(i));
      }
      hold.executeUpdate();
    }
    try (PreparedStatement insert =
        c.prepareStatement(
            "INSERT INTO reservations (id, brand, amount_micros, status) VALUES (?, ?, ?, 'reserved')")) {
      insert.setString(1, id);
      insert.setString(2, brand);
      insert.setLong(3, amount);
      insert.executeUpdate();
    }
    c.commit();
  }

  /** One transaction: lock the reservation and its cap rows, release the hold, count the cost. */
  private static void settle(Connection c, List<String> keys, String id, long actual)
      throws SQLException {
    long amount;
    try (PreparedStatement r =
        c.prepareStatement(
            "SELECT amount_micros FROM reservations WHERE id = ? AND status = 'reserved' FOR UPDATE")) {
      r.setString(1, id);
      try (ResultSet rs = r.executeQuery()) {
        if (!rs.next()) {
          c.rollback();
          throw new SQLException("not open: " + id);
        }
        amount = rs.getLong(1);
      }
    }
    try (PreparedStatement lock =
        c.prepareStatement(
            "SELECT cap_key FROM caps WHERE cap_key IN (?, ?, ?, ?) ORDER BY cap_key FOR UPDATE")) {
      for (int i = 0; i < 4; i++) {
        lock.setString(i + 1, keys.get(i));
      }
      lock.executeQuery().close();
    }
    try (PreparedStatement move =
        c.prepareStatement(
            "UPDATE caps SET reserved_micros = reserved_micros - ?, settled_micros = settled_micros + ? WHERE cap_key IN (?, ?, ?, ?)")) {
      move.setLong(1, amount);
      move.setLong(2, actual);
      for (int i = 0; i < 4; i++) {
        move.setString(i + 3, keys.get(i));
      }
      move.executeUpdate();
    }
    try (PreparedStatement close =
        c.prepareStatement(
            "UPDATE reservations SET status = 'settled', actual_micros = ? WHERE id = ?")) {
      close.setLong(1, actual);
      close.setString(2, id);
      close.executeUpdate();
    }
    c.commit();
  }
}
