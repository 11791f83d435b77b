package dev.spendgateway.ledger.ops;

import com.typesafe.config.Config;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * The H2 file journal as operator tools and the gateway's start-up check reach it directly over
 * JDBC: bounded waits, never creating a database that is not there, backup and restore.
 *
 * @param url the configured JDBC URL ({@code jdbc:h2:file:<data-dir>/ledger;...})
 * @param user database user
 * @param password database password
 * @param dataDir the directory holding {@code ledger.mv.db}
 */
public record JournalDatabase(String url, String user, String password, Path dataDir) {
  /** The journal's file name inside the data dir. */
  public static final String FILE = "ledger.mv.db";

  private static final String DB = "pekko-persistence-jdbc.shared-databases.slick.db.";

  /** The journal database {@code config} names; empty unless it is an H2 file database. */
  public static java.util.Optional<JournalDatabase> of(Config config) {
    if (!config.hasPath(DB + "url")
        || !config.getString(DB + "url").startsWith("jdbc:h2:file:")
        || !config.hasPath(DataDirs.KEY)) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.of(
        new JournalDatabase(
            config.getString(DB + "url"),
            config.hasPath(DB + "user") ? config.getString(DB + "user") : "sa",
            config.hasPath(DB + "password") ? config.getString(DB + "password") : "",
            Path.of(config.getString(DataDirs.KEY))));
  }

  public Path file() {
    return dataDir.resolve(FILE);
  }

  public boolean exists() {
    return Files.exists(file());
  }

  /** The URL with {@code IFEXISTS=TRUE}: opening never creates an empty database in its place. */
  public String existingOnlyUrl() {
    return withSetting(url, "IFEXISTS", "TRUE");
  }

  /**
   * The URL an operator tool reads with. While a gateway holds the journal's lock it serves the
   * file (AUTO_SERVER) and the tool connects through it; with no gateway running the tool opens the
   * file itself read-only and does not serve it, so a gateway started meanwhile never becomes a
   * client of a short-lived tool. Either way it never creates a database.
   */
  public String operatorUrl() {
    if (FileJournalLock.liveHolder(dataDir).isPresent()) {
      return gatewayServerUrl().orElseGet(this::existingOnlyUrl);
    }
    removeStaleH2Lock();
    return readOnlyUrl();
  }

  /**
   * The running gateway's own database server, as its H2 lock file ({@code ledger.lock.db}) names
   * it: {@code jdbc:h2:tcp://HOST:PORT/KEY} plus the configured settings. Not the AUTO_SERVER URL:
   * a client of that re-opens the file itself when the server goes away (H2 reconnects every
   * AUTO_SERVER client), so a tool left running (a {@code tail}) took the journal over read-write
   * when the gateway died, and served it to the restarted gateway. Over plain TCP the tool's next
   * query fails instead. Empty when the lock file names no server (the gateway is still opening).
   */
  java.util.Optional<String> gatewayServerUrl() {
    java.util.Properties lock = new java.util.Properties();
    try (java.io.Reader in = Files.newBufferedReader(dataDir.resolve("ledger.lock.db"))) {
      lock.load(in);
    } catch (IOException | IllegalArgumentException e) {
      return java.util.Optional.empty();
    }
    String server = lock.getProperty("server");
    String key = lock.getProperty("id");
    if (server == null || key == null || server.isBlank() || key.isBlank()) {
      return java.util.Optional.empty();
    }
    // The database's own settings (WRITE_DELAY) are the gateway's to set, not a reader's.
    String settings = url;
    for (String setting : List.of("AUTO_SERVER", "AUTO_SERVER_PORT", "IFEXISTS", "WRITE_DELAY")) {
      settings = withoutSetting(settings, setting);
    }
    int first = settings.indexOf(';');
    return java.util.Optional.of(
        "jdbc:h2:tcp://" + server + "/" + key + (first < 0 ? "" : settings.substring(first)));
  }

  /**
   * Refuses a journal file that cannot be read as a database, before anything opens it for writing:
   * H2 opening such a file read-write makes a new, empty database in its place, and the ledger
   * would start on empty books, the damaged file gone. Opens it read-only (a stale H2 lock file
   * from a crash removed first); a missing or zero-length file holds nothing and passes.
   */
  public void requireReadable(Duration timeout) throws JournalUnavailableException {
    long size;
    try {
      size = exists() ? Files.size(file()) : 0;
    } catch (IOException e) {
      size = 0;
    }
    if (size == 0) {
      return;
    }
    removeStaleH2Lock();
    try {
      probe(readOnlyUrl(), timeout);
    } catch (JournalUnavailableException e) {
      if (e.getMessage().contains("did not open within")
          || e.getMessage().contains("already in use")
          || e.getMessage().contains("FileLock")) {
        throw e; // held by another process: it may let go
      }
      throw new JournalDamagedException(
          "the journal database in "
              + dataDir
              + " cannot be read as a journal ("
              + e.getMessage().replaceFirst("^.* cannot be opened: ", "")
              + "; "
              + FILE
              + ", "
              + size
              + " bytes); it was left as it is: restore a backup into a new data dir"
              + " (bin/gateway-admin restore), or move the file aside to start empty books");
    }
  }

  /** This journal opened read-only, served to nobody, never created. */
  private String readOnlyUrl() {
    return withSetting(
        withSetting(withoutSetting(existingOnlyUrl(), "AUTO_SERVER"), "ACCESS_MODE_DATA", "r"),
        "AUTO_SERVER",
        "FALSE");
  }

  /**
   * Removes H2's lock file ({@code ledger.lock.db}, not the journal) when the process it names is
   * gone: a gateway killed or powered off leaves it, and H2 refuses every read-only open while it
   * exists ("Database may be already in use"), so a crashed gateway's journal could not be
   * verified, exported or backed up before a gateway had been started on it again. Called only with
   * no gateway holding the data dir; the lock is stale when the server it names does not answer
   * (H2's own test when a gateway opens the file). A lock file naming no server is left alone.
   */
  private void removeStaleH2Lock() {
    Path lockFile = dataDir.resolve("ledger.lock.db");
    java.util.Properties lock = new java.util.Properties();
    try (java.io.Reader in = Files.newBufferedReader(lockFile)) {
      lock.load(in);
    } catch (IOException | IllegalArgumentException e) {
      return; // none, or unreadable: H2 says what it makes of it
    }
    String server = lock.getProperty("server", "");
    int colon = server.lastIndexOf(':');
    if (colon <= 0) {
      return;
    }
    try (java.net.Socket probe = new java.net.Socket()) {
      probe.connect(
          new java.net.InetSocketAddress(
              server.substring(0, colon), Integer.parseInt(server.substring(colon + 1))),
          2000);
      return; // something serves it: not stale
    } catch (IOException | IllegalArgumentException gone) {
      // nobody answers there: the process that held the database has ended
    }
    try {
      Files.deleteIfExists(lockFile);
    } catch (IOException e) {
      // H2 then refuses with its own message naming the file
    }
  }

  /**
   * Opens {@code jdbcUrl}, runs {@code SELECT 1} and closes, within {@code timeout}; throws {@link
   * JournalUnavailableException} with H2's own reason (one line) otherwise. A CLI must not wait
   * days on a database that never answers.
   */
  public void probe(String jdbcUrl, Duration timeout) throws JournalUnavailableException {
    try {
      open(jdbcUrl, timeout).close();
    } catch (SQLException e) {
      throw new JournalUnavailableException(
          "the journal database in " + dataDir + " cannot be closed: " + firstLine(e));
    }
  }

  /**
   * As {@link #probe}, but the connection stays open for the caller. The gateway keeps it while it
   * runs: H2 then keeps the database open in this process, and the ledger's own connections reuse
   * it instead of opening (and starting the AUTO_SERVER) a second time.
   */
  public Connection open(String jdbcUrl, Duration timeout) throws JournalUnavailableException {
    ExecutorService executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "journal-probe");
              t.setDaemon(true);
              return t;
            });
    try {
      Future<Connection> opened =
          executor.submit(
              () -> {
                Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                try (Statement s = c.createStatement()) {
                  s.execute("SELECT 1");
                } catch (SQLException e) {
                  c.close();
                  throw e;
                }
                return c;
              });
      return opened.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new JournalUnavailableException(
          "the journal database in "
              + dataDir
              + " did not open within "
              + timeout.toSeconds()
              + " s (another process holding it?)");
    } catch (ExecutionException e) {
      throw new JournalUnavailableException(
          "the journal database in " + dataDir + " cannot be opened: " + firstLine(e.getCause()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new JournalUnavailableException(
          "interrupted while opening the journal database in " + dataDir);
    } finally {
      executor.shutdownNow();
    }
  }

  /**
   * Why there is nothing to read at {@code file} ({@code ledger.mv.db}), as one line: the setting
   * to point at the right directory, and the demo's journal when it sits below ({@code bin/gateway
   * --demo} keeps its books in {@code demo/} of the data dir, where a newcomer does not look).
   */
  public static String noJournalAt(Path file) {
    Path absolute = file.toAbsolutePath().normalize();
    Path demo = absolute.resolveSibling("demo").resolve(absolute.getFileName());
    return "no journal at "
        + absolute
        + " (set GATEWAY_DATA_DIR or --data-dir to the gateway's data directory"
        + (Files.exists(demo)
            ? "; the demo's journal is in " + demo.getParent() + ": --data-dir " + demo.getParent()
            : "")
        + ")";
  }

  /**
   * Writes a consistent copy of the journal to {@code zip} with H2's {@code BACKUP TO} — also while
   * the gateway runs and writes (through its AUTO_SERVER). Refuses when there is no journal.
   */
  public void backup(Path zip, Duration timeout) throws JournalUnavailableException, IOException {
    if (!exists()) {
      throw new JournalUnavailableException(noJournalAt(file()));
    }
    Path target = zip.toAbsolutePath().normalize();
    if (Files.exists(target)) {
      throw new IOException("backup file " + target + " exists already; choose a new name");
    }
    Files.createDirectories(target.getParent());
    String jdbcUrl = operatorUrl();
    probe(jdbcUrl, timeout);
    try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
        Statement s = c.createStatement()) {
      s.execute("BACKUP TO '" + target.toString().replace("'", "''") + "'");
    } catch (SQLException e) {
      throw new JournalUnavailableException("backup failed: " + firstLine(e));
    }
    // Only a backup on the disk is one: the tool says OK next, and the operator may rely on it.
    DurableFiles.force(target);
    DurableFiles.forceDirectory(target.getParent());
  }

  /**
   * Puts the journal from a {@code BACKUP TO} zip into this (empty) data dir. Refuses when the data
   * dir already holds a journal (move it aside first: never overwrite books) or a gateway holds its
   * lock; then opens the restored file to prove it is a database.
   */
  public void restore(Path zip, Duration timeout) throws JournalUnavailableException, IOException {
    if (!Files.isRegularFile(zip)) {
      throw new IOException("no backup file at " + zip.toAbsolutePath());
    }
    // Held until the restored file is in place: a gateway started meanwhile stops at its lock
    // instead of creating a journal that the restored file would then be renamed over.
    JournalLock.Lease lease;
    try {
      lease = new FileJournalLock(dataDir).acquire();
    } catch (JournalInUseException e) {
      throw new IllegalStateException(
          "a gateway is running on "
              + dataDir
              + " ("
              + e.holder().map(LockHolder::describe).orElse("holder unknown")
              + "); stop it before restoring",
          e);
    }
    try (lease) {
      restoreLocked(zip, timeout);
    }
  }

  private void restoreLocked(Path zip, Duration timeout)
      throws JournalUnavailableException, IOException {
    if (exists()) {
      throw new IOException(
          "the data dir "
              + dataDir
              + " already holds a journal ("
              + FILE
              + "); move it aside first (keep it), then restore");
    }
    Files.createDirectories(dataDir);
    Path partial = dataDir.resolve(FILE + ".restoring");
    boolean found = false;
    try (ZipInputStream in = new ZipInputStream(Files.newInputStream(zip))) {
      for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        if (Path.of(e.getName()).getFileName().toString().equals(FILE)) {
          copy(in, partial);
          found = true;
          break;
        }
      }
    } catch (java.util.zip.ZipException e) {
      Files.deleteIfExists(partial);
      throw new IOException(zip + " is not a backup zip (" + e.getMessage() + ")");
    } catch (IOException e) {
      // Cut short (a backup killed mid-write, a copy that ran out of disk): nothing half-copied
      // is left in the data dir.
      Files.deleteIfExists(partial);
      throw new IOException(
          zip
              + " is not a complete backup ("
              + e.getMessage()
              + "); nothing was restored: take it again, or use an older one");
    }
    if (!found) {
      Files.deleteIfExists(partial);
      throw new IOException(zip + " holds no " + FILE + "; is it a gateway-admin backup?");
    }
    // On the disk before the tool says "restored": a power cut before the gateway's first write
    // must not leave an empty or missing journal, on which the next start would open empty books.
    DurableFiles.force(partial);
    Files.move(partial, file(), StandardCopyOption.ATOMIC_MOVE);
    DurableFiles.forceDirectory(dataDir);
    try {
      probe(
          withSetting(
              withSetting(
                  withoutSetting(existingOnlyUrl(), "AUTO_SERVER"), "ACCESS_MODE_DATA", "r"),
              "AUTO_SERVER",
              "FALSE"),
          timeout);
    } catch (JournalUnavailableException e) {
      Files.move(
          file(), dataDir.resolve(FILE + ".unreadable"), StandardCopyOption.REPLACE_EXISTING);
      throw e;
    }
  }

  private static void copy(InputStream in, Path to) throws IOException {
    Files.copy(in, to, StandardCopyOption.REPLACE_EXISTING);
  }

  static String withSetting(String url, String key, String value) {
    return withoutSetting(url, key) + ";" + key + "=" + value;
  }

  static String withoutSetting(String url, String key) {
    StringBuilder out = new StringBuilder();
    for (String part : url.split(";")) {
      if (out.length() > 0
          && part.toUpperCase(java.util.Locale.ROOT)
              .startsWith(key.toUpperCase(java.util.Locale.ROOT) + "=")) {
        continue;
      }
      if (out.length() > 0) {
        out.append(';');
      }
      out.append(part);
    }
    return out.toString();
  }

  /** An exception's message as one line (H2 appends the SQL state and a trace on new lines). */
  public static String firstLine(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message =
        root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return message.lines().findFirst().orElse(message).strip();
  }
}
