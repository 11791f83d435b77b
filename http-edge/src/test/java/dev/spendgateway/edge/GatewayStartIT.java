package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.GatewayProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged gateway started as bin/gateway starts it (conf/ on the class path): a failed start
 * ends the process with one line and a non-zero exit, and one data dir has one writer.
 *
 * <p>Each start is a JVM of its own, the slow part of this class. The two starts that must fail by
 * themselves share nothing with the others, so they are launched together before any test runs and
 * each test then waits for its own to end (the journal one spends most of its time pausing between
 * tries); the relative data dir is the one the single-writer case starts its first gateway on,
 * which also shows it is the same directory an absolute path names.
 */
class GatewayStartIT {
  /** Quick JIT only: a start is short, and it runs beside other JVMs on a small machine. */
  private static final String QUICK_START = "-XX:TieredStopAtLevel=1";

  private static final Duration READY_WITHIN = Duration.ofSeconds(300);
  private static final Duration ENDS_WITHIN = Duration.ofSeconds(180);

  @TempDir static Path temp;

  /** GATEWAY_PORT=abc: refused by the start check. */
  private static GatewayProcess badPort;

  /** A journal file of zeros: the journal database cannot be opened, however often it is tried. */
  private static GatewayProcess corruptJournal;

  /** A journal cut short: refused, and left as it is. */
  private static GatewayProcess cutJournal;

  @BeforeAll
  static void launchTheStartsThatMustFail() throws Exception {
    badPort =
        launch(temp.resolve("bad-port-data"))
            .env("GATEWAY_PORT", "abc")
            .start(temp.resolve("bad-port.txt"));
    Path data = Files.createDirectories(temp.resolve("corrupt-data"));
    Files.write(data.resolve("ledger.mv.db"), new byte[64 * 1024]); // zeros: not an H2 file
    corruptJournal = launch(data).start(temp.resolve("corrupt.txt"));
    cutJournal = launch(cutShortJournal(temp.resolve("cut-data"))).start(temp.resolve("cut.txt"));
  }

  /**
   * A real H2 database cut short (a full disk, a torn copy): opened for writing, H2 made a new,
   * empty database in its place and the ledger started on empty books.
   */
  private static Path cutShortJournal(Path data) throws Exception {
    Files.createDirectories(data);
    String url = "jdbc:h2:file:" + data + "/ledger;DATABASE_TO_UPPER=false";
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, "sa", "");
        java.sql.Statement s = c.createStatement()) {
      s.execute("CREATE TABLE facts (n INT, pad VARCHAR(200))");
      for (int i = 0; i < 2000; i++) {
        s.execute("INSERT INTO facts VALUES (" + i + ", REPEAT('x', 200))");
      }
    }
    // Cut to its two 4 KB headers: they name chunks that are gone, and no older version of the
    // database is left in the file for H2 to fall back to (a longer cut may still hold one, which
    // H2 then opens as the journal: an older state, indistinguishable from a sound one).
    Path file = data.resolve("ledger.mv.db");
    byte[] whole = Files.readAllBytes(file);
    Files.write(file, java.util.Arrays.copyOf(whole, 8192));
    return data;
  }

  @AfterAll
  static void stopLeftovers() throws Exception {
    for (GatewayProcess p : List.of(badPort, corruptJournal, cutJournal)) {
      p.process.destroyForcibly();
    }
  }

  @Test
  void aSecondGatewayOnTheSameDataDirRefusesNamingTheFirst() throws Exception {
    Path work = Files.createDirectories(temp.resolve("single-writer"));
    Path data = work.resolve("mydata");
    // The first names its data dir relative to its working directory; the second names it absolute.
    try (GatewayProcess first =
        launch(Path.of("mydata")).workDir(work).start(work.resolve("first.txt"))) {
      first.awaitReady(READY_WITHIN);
      assertTrue(
          Files.exists(data.resolve("ledger.mv.db")),
          "a relative data dir is taken from the working directory");
      assertJournalServerOnLoopbackOnly(data);

      GatewayProcess second = launch(data).start(work.resolve("second.txt"));
      assertEquals(1, second.awaitExit(ENDS_WITHIN), "the second gateway stops by itself");
      String line = oneLine(second);
      assertTrue(line.contains("in use by another gateway (pid " + first.pid() + " on "), line);
      assertTrue(first.process.isAlive(), "the first gateway keeps running");
      assertTrue(Files.readString(data.resolve("gateway.lock")).contains("pid=" + first.pid()));
    }
    // Once the first stopped, the lock is free again.
    try (GatewayProcess again = launch(data).start(work.resolve("again.txt"))) {
      again.awaitReady(READY_WITHIN);
    }
  }

  @Test
  void aBadValueInTheEnvironmentEndsTheProcessWithOneLine() throws Exception {
    assertEquals(2, badPort.awaitExit(ENDS_WITHIN));
    String line = oneLine(badPort);
    assertTrue(
        line.contains("gateway.port") && line.contains("GATEWAY_PORT") && line.contains("\"abc\""),
        line);
  }

  @Test
  void aJournalH2CannotOpenIsOneLineAtOnce() throws Exception {
    assertEquals(1, corruptJournal.awaitExit(ENDS_WITHIN), "stops by itself");
    String line = oneLine(corruptJournal);
    assertTrue(
        line.startsWith("gateway: the journal database in " + temp.resolve("corrupt-data"))
            && line.contains("cannot be read as a journal"),
        line);
  }

  @Test
  void aJournalCutShortIsRefusedAndLeftAsItIs() throws Exception {
    Path file = temp.resolve("cut-data").resolve("ledger.mv.db");
    long size = Files.size(file);
    assertEquals(
        1,
        cutJournal.awaitExit(ENDS_WITHIN),
        "stops by itself; journal file of " + size + " bytes");
    String line = oneLine(cutJournal);
    assertTrue(
        line.startsWith("gateway: the journal database in " + temp.resolve("cut-data"))
            && line.contains("cannot be read as a journal")
            && line.contains("it was left as it is"),
        line);
    assertEquals(size, Files.size(file), "the journal file is as it was");
  }

  /**
   * The journal's H2 server (AUTO_SERVER, which operator tools on this host connect to) listens on
   * loopback only. It listened on every interface ({@code *:port}), beside a gateway that binds
   * 127.0.0.1 by default because it is internal. Read from /proc/net, no connection made.
   */
  private static void assertJournalServerOnLoopbackOnly(Path data) throws IOException {
    java.util.Properties lock = new java.util.Properties();
    try (var in = Files.newBufferedReader(data.resolve("ledger.lock.db"))) {
      lock.load(in);
    }
    String server = lock.getProperty("server");
    String port =
        String.format(
            "%04X", Integer.parseInt(server.substring(server.lastIndexOf(':') + 1).trim()));
    List<String> listening = new java.util.ArrayList<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      for (String line : Files.readAllLines(Path.of(table))) {
        String[] f = line.trim().split("\\s+");
        if (f.length > 3 && f[1].endsWith(":" + port) && f[3].equals("0A")) {
          listening.add(f[1]);
        }
      }
    }
    assertTrue(!listening.isEmpty(), "the journal server listens on port " + server);
    for (String local : listening) {
      String address = local.substring(0, local.indexOf(':'));
      assertTrue(
          address.equals("0100007F") || address.equals("0000000000000000FFFF00000100007F"),
          "the journal server " + server + " listens on " + local + ", not loopback only");
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** A gateway on {@code data}, on a port of its own, with a token (so only the case differs). */
  private static GatewayProcess.Launch launch(Path data) throws IOException {
    return GatewayProcess.launch()
        .jvm(QUICK_START)
        .dataDir(data)
        .port(GatewayProcess.freePort())
        .token("it-token")
        .workDir(temp);
  }

  /**
   * The process's output is exactly one line (startup logging is at INFO on stdout only after the
   * check).
   */
  private static String oneLine(GatewayProcess p) throws IOException {
    List<String> lines =
        p.output()
            .strip()
            .lines()
            .filter(
                l -> l.startsWith("gateway: ") || l.contains("Exception") || l.contains("\tat "))
            .toList();
    assertEquals(1, lines.size(), "one line: " + p.output());
    return lines.get(0);
  }
}
