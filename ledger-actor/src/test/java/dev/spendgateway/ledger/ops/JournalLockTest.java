package dev.spendgateway.ledger.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One writer per data dir, data dirs made absolute, and the journal database never created by an
 * operator's backup or restore. (Two gateway processes on one data dir: GatewayStartIT.)
 */
class JournalLockTest {
  @TempDir Path dir;

  @Test
  void aSecondLockOnTheSameDataDirIsRefusedNamingTheHolder() throws Exception {
    FileJournalLock lock = new FileJournalLock(dir);
    try (JournalLock.Lease held = lock.acquire()) {
      JournalInUseException refused =
          assertThrows(JournalInUseException.class, () -> new FileJournalLock(dir).acquire());
      long pid = ProcessHandle.current().pid();
      assertTrue(
          refused.getMessage().contains("pid " + pid + " on " + LockHolder.localHost()),
          refused.getMessage());
      assertEquals(pid, refused.holder().orElseThrow().pid());
      assertEquals(
          pid,
          FileJournalLock.liveHolder(dir).orElseThrow().pid(),
          "tools see the holder without locking");
    }
    assertTrue(FileJournalLock.liveHolder(dir).isEmpty(), "released: nobody holds it");
    try (JournalLock.Lease again = new FileJournalLock(dir).acquire()) {
      assertTrue(FileJournalLock.liveHolder(dir).isPresent());
    }
  }

  @Test
  void aLockFileLeftByADeadProcessHoldsNothing() throws Exception {
    Files.writeString(
        dir.resolve(FileJournalLock.FILE_NAME),
        "pid=999999999\nhost=" + LockHolder.localHost() + "\nsince=2026-01-01T00:00:00Z\n");
    assertTrue(FileJournalLock.liveHolder(dir).isEmpty());
    try (JournalLock.Lease lease = new FileJournalLock(dir).acquire()) {
      assertEquals(
          ProcessHandle.current().pid(), FileJournalLock.liveHolder(dir).orElseThrow().pid());
    }
  }

  @Test
  void onlyAnH2FileJournalIsLockedByFile() {
    Config h2 =
        ConfigFactory.parseMap(
            Map.of(
                JournalLock.URL_KEY,
                "jdbc:h2:file:" + dir + "/ledger",
                DataDirs.KEY,
                dir.toString()));
    assertTrue(JournalLock.forJournal(h2) instanceof FileJournalLock);
    Config pg =
        ConfigFactory.parseMap(
            Map.of(
                JournalLock.URL_KEY, "jdbc:postgresql://db/gateway", DataDirs.KEY, dir.toString()));
    assertFalse(JournalLock.forJournal(pg) instanceof FileJournalLock);
  }

  @Test
  void aRelativeDataDirIsResolvedAbsoluteAndTheUrlFollows() {
    Config unresolved =
        ConfigFactory.parseString(
            "gateway.data-dir = \"mydata\"\nurl = \"jdbc:h2:file:\"${gateway.data-dir}\"/ledger\"");
    Config resolved = DataDirs.resolveAbsolute(unresolved);
    String absolute = Path.of("mydata").toAbsolutePath().toString();
    assertEquals(absolute, resolved.getString(DataDirs.KEY));
    assertEquals("jdbc:h2:file:" + absolute + "/ledger", resolved.getString("url"));
  }

  @Test
  void anUnwritableDataDirIsNamed() throws Exception {
    Path file = Files.writeString(dir.resolve("a-file"), "x");
    assertTrue(DataDirs.unwritable(file).orElseThrow().contains("not a directory"));
    assertTrue(
        DataDirs.unwritable(file.resolve("sub")).orElseThrow().contains("cannot be created"));
    assertTrue(DataDirs.unwritable(dir.resolve("new")).isEmpty());
  }

  @Test
  void backupAndRestoreNeverCreateAnEmptyDatabase() throws Exception {
    JournalDatabase missing =
        new JournalDatabase(
            "jdbc:h2:file:" + dir + "/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE",
            "sa",
            "",
            dir);
    JournalUnavailableException noJournal =
        assertThrows(
            JournalUnavailableException.class,
            () -> missing.backup(dir.resolve("b.zip"), Duration.ofSeconds(60)));
    assertTrue(noJournal.getMessage().startsWith("no journal at"), noJournal.getMessage());
    assertThrows(
        JournalUnavailableException.class,
        () -> missing.probe(missing.existingOnlyUrl(), Duration.ofSeconds(60)));
    assertFalse(Files.exists(dir.resolve("ledger.mv.db")), "IFEXISTS: nothing was created");

    // A real database: backed up, restored into an empty dir, refused over an existing journal.
    missing.probe(missing.url(), Duration.ofSeconds(60)); // the gateway's own open creates it
    Path zip = dir.resolve("backups/b.zip");
    missing.backup(zip, Duration.ofSeconds(60));
    Path fresh = dir.resolve("fresh");
    JournalDatabase restored =
        new JournalDatabase(
            "jdbc:h2:file:" + fresh + "/ledger;DATABASE_TO_UPPER=false", "sa", "", fresh);
    restored.restore(zip, Duration.ofSeconds(60));
    assertTrue(Files.size(fresh.resolve("ledger.mv.db")) > 0);
    Exception again =
        assertThrows(
            java.io.IOException.class, () -> restored.restore(zip, Duration.ofSeconds(60)));
    assertTrue(again.getMessage().contains("already holds a journal"), again.getMessage());
    Exception notAZip =
        assertThrows(
            java.io.IOException.class,
            () ->
                new JournalDatabase("jdbc:h2:file:" + dir + "/x/ledger", "sa", "", dir.resolve("x"))
                    .restore(
                        Files.writeString(dir.resolve("not.zip"), "nope"), Duration.ofSeconds(60)));
    assertTrue(
        notAZip.getMessage().contains("ledger.mv.db")
            || notAZip.getMessage().contains("not a backup"),
        notAZip.getMessage());

    // A backup cut short (the backup killed mid-write, a copy that ran out of disk): refused
    // naming it, nothing left in the data dir. It said "Unexpected end of ZLIB input stream" and
    // left the half-copied ledger.mv.db.restoring behind.
    byte[] whole = Files.readAllBytes(zip);
    Path half =
        Files.write(dir.resolve("half.zip"), java.util.Arrays.copyOf(whole, whole.length / 2));
    Path other = dir.resolve("other");
    JournalDatabase into =
        new JournalDatabase(
            "jdbc:h2:file:" + other + "/ledger;DATABASE_TO_UPPER=false", "sa", "", other);
    Exception cut =
        assertThrows(java.io.IOException.class, () -> into.restore(half, Duration.ofSeconds(60)));
    assertTrue(cut.getMessage().contains("not a complete backup"), cut.getMessage());
    assertTrue(cut.getMessage().contains(half.toString()), cut.getMessage());
    assertFalse(Files.exists(other.resolve("ledger.mv.db.restoring")), "nothing half-copied left");
    assertFalse(Files.exists(other.resolve("ledger.mv.db")));
  }

  /**
   * A gateway started while {@code restore} copies a backup in must not get the data dir: restore
   * looked for a running gateway once, before the copy, then renamed the copy over whatever {@code
   * ledger.mv.db} was there by then — the journal of a gateway that had started meanwhile and
   * acknowledged reservations into it (they were gone at its next start).
   */
  @Test
  void aGatewayCannotStartOnTheDataDirWhileRestoreCopiesIntoIt() throws Exception {
    Path zip = dir.resolve("big.zip");
    try (var out = new java.util.zip.ZipOutputStream(Files.newOutputStream(zip))) {
      out.setLevel(java.util.zip.Deflater.BEST_SPEED);
      out.putNextEntry(new java.util.zip.ZipEntry(JournalDatabase.FILE));
      byte[] zeros = new byte[1 << 20];
      for (int i = 0; i < 384; i++) {
        out.write(zeros);
      }
      out.closeEntry();
    }
    Path target = dir.resolve("target");
    JournalDatabase db =
        new JournalDatabase(
            "jdbc:h2:file:" + target + "/ledger;DATABASE_TO_UPPER=false", "sa", "", target);
    var restore =
        java.util.concurrent.CompletableFuture.runAsync(
            () -> {
              try {
                db.restore(zip, Duration.ofSeconds(60));
              } catch (Exception expected) {
                // zeros are no database; what matters is who held the data dir meanwhile
              }
            });
    Path partial = target.resolve(JournalDatabase.FILE + ".restoring");
    while (!Files.exists(partial) && !restore.isDone()) {
      Thread.onSpinWait();
    }
    assertTrue(Files.exists(partial), "the copy was seen under way");
    JournalInUseException refused =
        assertThrows(
            JournalInUseException.class,
            () -> new FileJournalLock(target).acquire().close(),
            "a gateway starting during the restore must be refused");
    assertTrue(
        refused.getMessage().contains("pid " + ProcessHandle.current().pid()),
        refused.getMessage());
    restore.get(60, java.util.concurrent.TimeUnit.SECONDS);
    assertTrue(FileJournalLock.liveHolder(target).isEmpty(), "restore let go of the data dir");
  }

  /**
   * A journal file H2 cannot read as a database (cut short by a full disk or a torn copy, or
   * overwritten) was opened read-write by the gateway's start, and H2 made a new, empty database in
   * its place: the file shrank from 100000 to 24576 bytes, the ledger recovered 0 reservations and
   * answered on empty books, every cap's spend forgotten. The start must refuse it and leave it as
   * it is; an empty file (nothing in it to lose) and a sound journal are opened as before.
   */
  @Test
  void aDamagedJournalIsRefusedAndLeftAsItIs() throws Exception {
    Path sound = Files.createDirectories(dir.resolve("sound"));
    JournalDatabase db = database(sound);
    try (java.sql.Connection c =
            java.sql.DriverManager.getConnection(db.url(), db.user(), db.password());
        java.sql.Statement s = c.createStatement()) {
      s.execute("CREATE TABLE facts (n INT, pad VARCHAR(200))");
      for (int i = 0; i < 2000; i++) {
        s.execute("INSERT INTO facts VALUES (" + i + ", REPEAT('x', 200))");
      }
    }
    db.requireReadable(Duration.ofSeconds(30));

    Path damaged = Files.createDirectories(dir.resolve("damaged"));
    byte[] whole = Files.readAllBytes(db.file());
    Files.write(
        damaged.resolve(JournalDatabase.FILE), java.util.Arrays.copyOf(whole, whole.length / 3));
    JournalDatabase cut = database(damaged);
    JournalDamagedException refused =
        assertThrows(
            JournalDamagedException.class, () -> cut.requireReadable(Duration.ofSeconds(30)));
    assertTrue(refused.getMessage().contains("cannot be read as a journal"), refused.getMessage());
    assertEquals(whole.length / 3, Files.size(cut.file()), "the damaged file is left as it was");

    Path empty = Files.createDirectories(dir.resolve("empty"));
    Files.write(empty.resolve(JournalDatabase.FILE), new byte[0]);
    database(empty).requireReadable(Duration.ofSeconds(30));
    database(Files.createDirectories(dir.resolve("new"))).requireReadable(Duration.ofSeconds(30));
  }

  private static JournalDatabase database(Path dataDir) {
    return new JournalDatabase(
        "jdbc:h2:file:" + dataDir + "/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE",
        "sa",
        "",
        dataDir);
  }
}
