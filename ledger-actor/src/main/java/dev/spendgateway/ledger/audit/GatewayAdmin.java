package dev.spendgateway.ledger.audit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.journal.PostgresJournal;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.audit.JournalReader.Snapshot;
import dev.spendgateway.ledger.ops.DataDirs;
import dev.spendgateway.ledger.ops.JournalDatabase;
import dev.spendgateway.ledger.ops.JournalLock;
import dev.spendgateway.ledger.ops.JournalUnavailableException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code bin/gateway-admin}: the operator's CLI. Read verbs ({@code replay}, {@code verify},
 * {@code export}, {@code tail}) read the journal in the data directory (read-only, also while the
 * gateway runs); write verbs ({@code credit}, {@code adjust}, {@code settle}, {@code void}) go
 * through the running gateway's {@code /admin} API, never to the journal directly, with the
 * operator's admin token ({@code GATEWAY_ADMIN_TOKEN} or {@code --admin-token}).
 *
 * <p>Exit codes: 0 done; 1 verify found a violation, or the gateway refused a write; 2 bad usage
 * or the journal/gateway could not be reached.
 *
 * <p>{@code credit} and {@code adjust} send an adjustment id ({@code --id}, else a new
 * {@code adj-<uuid>}), which the gateway applies at most once; when the outcome is unknown (no
 * answer, a broken connection, a 5xx) they print how to rerun safely with that id.
 */
@Command(
    name = "gateway-admin",
    mixinStandardHelpOptions = true,
    versionProvider = GatewayAdmin.Version.class,
    description = "Operate the spend gateway: replay, verify, export and tail the ledger journal; credit, adjust, "
        + "settle and void through the running gateway.",
    subcommands = {
      GatewayAdmin.Replay.class,
      GatewayAdmin.Verify.class,
      GatewayAdmin.Export.class,
      GatewayAdmin.Tail.class,
      GatewayAdmin.Backup.class,
      GatewayAdmin.Restore.class,
      ImportCommand.class,
      GatewayAdmin.Credit.class,
      GatewayAdmin.Adjust.class,
      GatewayAdmin.Settle.class,
      GatewayAdmin.VoidReservation.class,
      GatewayAdmin.Status.class,
      GatewayAdmin.ResetCircuit.class,
      CommandLine.HelpCommand.class
    })
public final class GatewayAdmin implements Callable<Integer> {
  static final int VIOLATION = 1;
  static final int FAILED = 2;

  @Spec CommandLine.Model.CommandSpec spec;

  /** The process environment ({@code GATEWAY_*}, {@code USER}); a map in tests. */
  private final Function<String, String> env;

  private GatewayAdmin(Function<String, String> env) {
    this.env = env;
  }

  public static void main(String[] args) {
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "dev/spendgateway/ledger/audit/gateway-admin-logback.xml");
    }
    // Initialize logging before the actor system's threads log, so nothing is buffered and replayed.
    org.slf4j.LoggerFactory.getILoggerFactory();
    System.exit(commandLine().execute(args));
  }

  /** The configured command line, reading the process environment. */
  public static CommandLine commandLine() {
    return commandLine(System::getenv);
  }

  /**
   * The configured command line reading {@code env} instead of the process environment (tests).
   * Every error is one line on stderr (the stack trace only with {@code --verbose}); a wrong
   * option or argument is one line naming it and where the help is, exit 2.
   */
  public static CommandLine commandLine(Function<String, String> env) {
    GatewayAdmin root = new GatewayAdmin(env);
    return new CommandLine(root)
        .setExecutionExceptionHandler((e, cmd, parsed) -> {
          cmd.getErr().println("gateway-admin: " + oneLine(e));
          if (root.verbose) {
            e.printStackTrace(cmd.getErr());
          }
          cmd.getErr().flush();
          return FAILED;
        })
        .setParameterExceptionHandler((e, args) -> {
          CommandLine cmd = e.getCommandLine();
          cmd.getErr().println("gateway-admin: " + oneLine(e) + " (" + cmd.getCommandSpec().qualifiedName()
              + " --help lists the options)");
          cmd.getErr().flush();
          return FAILED;
        });
  }

  /** The innermost cause's message, first line only (an exception's message may span lines). */
  static String oneLine(Throwable e) {
    Throwable t = e;
    while ((t instanceof java.util.concurrent.ExecutionException || t instanceof java.util.concurrent.CompletionException
        || t.getMessage() == null) && t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    return message.lines().findFirst().orElse(message).strip();
  }

  @Option(names = "--verbose", scope = CommandLine.ScopeType.INHERIT,
      description = "On an error, print the stack trace too.")
  boolean verbose;

  /** {@code --version}: the jar's version (its manifest). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"gateway-admin " + Optional.ofNullable(GatewayAdmin.class.getPackage().getImplementationVersion())
          .orElse("dev")};
    }
  }

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getOut());
    return FAILED;
  }

  // ---------------------------------------------------------------------------------------------
  // Journal access (read verbs)
  // ---------------------------------------------------------------------------------------------

  /**
   * The configuration the read verbs run with: {@code configFile} (the gateway's
   * conf/application.conf), system properties over it, {@code dataDir} over both (may be null).
   */
  public static Config journalConfig(Path configFile, Path dataDir) {
    JournalOptions options = new JournalOptions();
    options.config = configFile;
    options.dataDir = dataDir;
    return options.load();
  }

  /** Where the journal is: the data dir and the config naming the database. */
  static final class JournalOptions {
    @Option(names = "--data-dir", paramLabel = "DIR",
        description = "Directory holding the H2 journal (ledger.mv.db). Default: $GATEWAY_DATA_DIR, else ./data.")
    Path dataDir;

    @Option(names = "--config", paramLabel = "FILE",
        description = "HOCON config naming the journal database and the caps. Default: the gateway's "
            + "conf/application.conf (bin/gateway-admin puts conf/ on the class path).")
    Path config;

    @Option(names = "--journal-url", paramLabel = "JDBC_URL",
        description = "A PostgreSQL journal (cluster mode) instead of the H2 file. Default: $GATEWAY_JOURNAL_URL "
            + "(with $GATEWAY_JOURNAL_USER, $GATEWAY_JOURNAL_PASSWORD), else the H2 journal under the data dir.")
    String journalUrl;

    Config load() {
      return load(true);
    }

    /** @param requireJournal whether a missing H2 journal file is an error (not for {@code verify --input}) */
    Config load(boolean requireJournal) {
      Map<String, Object> flags = new HashMap<>();
      flags.put("pekko.loglevel", "WARNING");
      flags.put("pekko.stdout-loglevel", "WARNING");
      flags.put("pekko.coordinated-shutdown.exit-jvm", "off");
      flags.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
      if (dataDir != null) {
        flags.put("gateway.data-dir", dataDir.toAbsolutePath().toString());
      }
      ConfigFactory.invalidateCaches();
      Config app = config != null ? ConfigFactory.parseFile(config.toFile()) : ConfigFactory.defaultApplication();
      // The same data dir as the gateway's, absolute: H2 refuses an implicitly relative path.
      Config resolved = DataDirs.resolveAbsolute(ConfigFactory.parseMap(flags)
          .withFallback(ConfigFactory.defaultOverrides())
          .withFallback(app)
          // Replay reads pages of this many events per query (plugin default 500): fewer round trips.
          .withFallback(ConfigFactory.parseMap(Map.of("jdbc-read-journal.max-buffer-size", "10000")))
          .withFallback(ConfigFactory.defaultReference()));
      resolved = PostgresJournal.select(resolved, Optional.ofNullable(journalUrl));
      if (!resolved.hasPath("ledger.caps")) {
        throw new IllegalStateException("no ledger configuration found; pass --config conf/application.conf "
            + "(bin/gateway-admin puts conf/ on the class path)");
      }
      if (requireJournal) {
        requireJournalFile(resolved);
        return readOnly(resolved);
      }
      return resolved;
    }

    /**
     * The H2 journal opened the operator's way ({@link JournalDatabase#operatorUrl}: through the
     * running gateway, else read-only; never creating a database), after opening it once within
     * {@link #OPEN_TIMEOUT} so a database that does not answer is one line, not a silent wait.
     */
    private static Config readOnly(Config config) {
      Optional<JournalDatabase> db = JournalDatabase.of(config);
      if (db.isEmpty()) {
        return config;
      }
      String url = db.get().operatorUrl();
      try {
        db.get().probe(url, OPEN_TIMEOUT);
      } catch (JournalUnavailableException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
      return ConfigFactory.parseMap(Map.of(JournalLock.URL_KEY, url)).withFallback(config);
    }

    /** An H2 file URL for a file that does not exist would create an empty database: refuse instead. */
    private static void requireJournalFile(Config config) {
      String urlKey = "pekko-persistence-jdbc.shared-databases.slick.db.url";
      if (!config.hasPath(urlKey) || !config.hasPath("gateway.data-dir")) {
        return;
      }
      String url = config.getString(urlKey);
      if (url.startsWith("jdbc:h2:file:")) {
        Path file = Path.of(config.getString("gateway.data-dir"), "ledger.mv.db");
        if (!Files.exists(file)) {
          throw new IllegalStateException("no journal at " + file.toAbsolutePath()
              + " (set GATEWAY_DATA_DIR or --data-dir to the gateway's data directory)");
        }
      }
    }
  }

  /** How long a verb waits for the journal database to open before it gives up with a message. */
  static final Duration OPEN_TIMEOUT = Duration.ofSeconds(60);

  /** An actor system for reading the journal, shut down when closed. */
  static final class JournalSession implements AutoCloseable {
    final ActorSystem<Void> system;
    final Config config;
    final JournalReader reader;

    JournalSession(JournalOptions options) {
      this(options, true);
    }

    JournalSession(JournalOptions options, boolean requireJournal) {
      this.config = options.load(requireJournal);
      this.system = ActorSystem.create(Behaviors.empty(), "gateway-admin", config);
      this.reader = new JournalReader(system);
    }

    LedgerAudit newAudit() {
      return new LedgerAudit(LedgerSettings.fromConfig(config).caps());
    }

    <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception {
      return stage.toCompletableFuture().get(7, TimeUnit.DAYS);
    }

    @Override
    public void close() throws Exception {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Command(name = "replay", mixinStandardHelpOptions = true,
      description = {
        "Rebuild the books from the journal and print every cap like GET /usage.",
        "Reads the journal read-only; works while the gateway runs and on a copied data dir.",
        "Progress (events/s) goes to stderr every second."})
  static final class Replay implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(names = "--until", paramLabel = "TIME",
        description = "Stop after the last event at or before TIME (ISO-8601 instant, e.g. 2026-11-30T12:00:00Z) "
            + "and show the cap windows of TIME. Default: every event, windows of now.")
    Instant until;

    @Option(names = "--json", description = "Print the JSON body GET /usage would answer.")
    boolean json;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      try (JournalSession session = new JournalSession(journal)) {
        Progress progress = new Progress(errStream(spec), "replay");
        LedgerAudit audit = session.await(AuditRuns.replay(session.system, session.reader.current(1),
            Optional.ofNullable(until), session.newAudit(), progress));
        progress.finish();
        var usage = audit.usage(until != null ? until : Clock.systemUTC().instant());
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? UsageReport.json(usage) + "\n" : UsageReport.table(usage));
        out.flush();
        return 0;
      }
    }
  }

  @Command(name = "verify", mixinStandardHelpOptions = true,
      description = {
        "Check that every cap held at every event of the journal; exit 1 naming the first violation.",
        "Replays the journal and checks, at every event:",
        "  no reservation accepted past a cap (global, pool, preview, brand as sent),",
        "  every reservation closed at most once, every adjustment id applied at most once,",
        "  the replayed totals equal the latest snapshot's at its sequence number.",
        "Exit 0 when all hold; exit 1 naming the first violating event (sequence number and what broke).",
        "Caps are checked against the configured ones: verify with the caps the journal was written under."})
  static final class Verify implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(names = "--input", paramLabel = "FILE",
        description = "Verify an export (export --format jsonl) instead of the journal; no snapshot check.")
    Path input;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      try (JournalSession session = new JournalSession(journal, input == null)) {
        Progress progress = new Progress(errStream(spec), "verify");
        Optional<Snapshot> snapshot = Optional.empty();
        Source<Journaled, NotUsed> events;
        Stream<Journaled> file = null;
        if (input != null) {
          file = new JsonlEvents().read(input);
          Stream<Journaled> lines = file;
          events = Source.fromJavaStream(() -> lines);
        } else {
          snapshot = session.reader.latestSnapshot(Duration.ofSeconds(60));
          events = session.reader.current(1);
        }
        LedgerAudit audit = session.newAudit();
        Optional<Violation> violation;
        try {
          violation = session.await(AuditRuns.verify(session.system, events, snapshot, audit, progress));
        } finally {
          if (file != null) {
            file.close();
          }
        }
        progress.finish();
        PrintWriter out = spec.commandLine().getOut();
        if (violation.isPresent()) {
          out.println("VIOLATION at " + violation.get());
          out.flush();
          return VIOLATION;
        }
        out.printf("OK: %d events verified (last sequence number %d)%s%n", audit.events(), audit.lastSequenceNr(),
            snapshot.map(s -> s.sequenceNr() <= audit.lastSequenceNr()
                ? "; totals equal the snapshot at " + s.sequenceNr()
                : "; snapshot at " + s.sequenceNr() + " is past the journal's end").orElse("; no snapshot"));
        out.flush();
        return 0;
      }
    }
  }

  @Command(name = "export", mixinStandardHelpOptions = true,
      description = {
        "Write the journal's events as JSON lines.",
        "One per line: {\"seq\":N,\"type\":\"ReservationMade\",\"event\":{...}}.",
        "Money in integer micro-dollars, instants ISO-8601 UTC; every event carries its schema version v."})
  static final class Export implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(names = "--format", defaultValue = "jsonl", paramLabel = "FORMAT", description = "Only jsonl.")
    String format;

    @Option(names = "--from", defaultValue = "1", paramLabel = "SEQ", description = "First sequence number (default 1).")
    long from;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Write here instead of stdout.")
    Path output;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (!format.equals("jsonl")) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--format: only jsonl is supported");
      }
      try (JournalSession session = new JournalSession(journal);
          PrintWriter out = output == null ? null : new PrintWriter(Files.newBufferedWriter(output))) {
        PrintWriter target = out != null ? out : spec.commandLine().getOut();
        JsonlEvents jsonl = new JsonlEvents();
        Progress progress = new Progress(errStream(spec), "export");
        session.await(session.reader.current(from).runWith(Sink.foreach(j -> {
          target.println(jsonl.line(j));
          progress.tick();
        }), session.system));
        target.flush();
        progress.finish();
        return 0;
      }
    }
  }

  @Command(name = "tail", mixinStandardHelpOptions = true,
      description = {
        "Follow the journal: print new events as JSON lines as they are written.",
        "Same format as export.",
        "Polls every jdbc-read-journal.refresh-interval (1s). Stop with Ctrl-C."})
  static final class Tail implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(names = "--from", paramLabel = "SEQ",
        description = "Start at this sequence number. Default: after the last event now in the journal.")
    Long from;

    @Option(names = "--limit", paramLabel = "N", description = "Stop after N events (default: follow forever).")
    Long limit;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      try (JournalSession session = new JournalSession(journal)) {
        long start = from != null ? from : session.await(session.reader.lastSequenceNr()) + 1;
        PrintWriter out = spec.commandLine().getOut();
        JsonlEvents jsonl = new JsonlEvents();
        Source<Journaled, NotUsed> live = session.reader.live(start);
        if (limit != null) {
          live = live.take(limit);
        }
        session.await(live.runWith(Sink.foreach(j -> {
          out.println(jsonl.line(j));
          out.flush();
        }), session.system));
        return 0;
      }
    }
  }

  @Command(name = "backup", mixinStandardHelpOptions = true,
      description = {
        "Write a consistent copy of the journal (H2 BACKUP TO, a zip holding ledger.mv.db).",
        "Safe while the gateway runs and writes (it makes the copy); never creates a database: a data dir",
        "without a journal is an error. Restore it with: gateway-admin restore FILE --data-dir EMPTY_DIR."})
  static final class Backup implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE.zip",
        description = "The backup file to write; must not exist yet.")
    Path output;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      JournalDatabase db = JournalDatabase.of(journal.load(true)).orElseThrow(() -> new IllegalStateException(
          "the journal is not an H2 file database; back it up with that database's own tools"));
      db.backup(output, OPEN_TIMEOUT);
      PrintWriter out = spec.commandLine().getOut();
      out.println("backup of " + db.file() + " written to " + output.toAbsolutePath().normalize() + " ("
          + Files.size(output) + " bytes); check it: gateway-admin restore " + output + " --data-dir /tmp/check && "
          + "gateway-admin verify --data-dir /tmp/check");
      out.flush();
      return 0;
    }
  }

  @Command(name = "restore", mixinStandardHelpOptions = true,
      description = {
        "Put the journal from a backup zip into a data dir that has no journal yet.",
        "Refuses a data dir that holds a journal (move ledger.mv.db aside first: books are never overwritten)",
        "or that a running gateway holds. Then: gateway-admin verify --data-dir DIR, and start the gateway on it."})
  static final class Restore implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Parameters(index = "0", paramLabel = "FILE.zip", description = "A backup written by gateway-admin backup.")
    Path backup;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      JournalDatabase db = JournalDatabase.of(journal.load(false)).orElseThrow(() -> new IllegalStateException(
          "the journal is not an H2 file database; restore it with that database's own tools"));
      db.restore(backup, OPEN_TIMEOUT);
      PrintWriter out = spec.commandLine().getOut();
      out.println("restored " + backup + " into " + db.file() + "; check it: gateway-admin verify --data-dir "
          + db.dataDir());
      out.flush();
      return 0;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Write verbs: through the running gateway's /admin API
  // ---------------------------------------------------------------------------------------------

  /**
   * How to reach the running gateway's {@code /admin} routes: they take the operator's token
   * ({@code GATEWAY_ADMIN_TOKEN}), never the callers' {@code GATEWAY_TOKEN}.
   */
  static final class GatewayOptions {
    @Spec(Spec.Target.MIXEE) CommandLine.Model.CommandSpec mixee;

    @Option(names = "--host", paramLabel = "HOST", description = "Gateway host. Default: $GATEWAY_HOST, else 127.0.0.1.")
    String host;

    @Option(names = "--port", paramLabel = "PORT", description = "Gateway port. Default: $GATEWAY_PORT, else 8787.")
    Integer port;

    @Option(names = "--admin-token", paramLabel = "TOKEN",
        description = "The operator's admin token (not the callers' gateway token). Default: $GATEWAY_ADMIN_TOKEN.")
    String adminToken;

    @Option(names = "--operator", paramLabel = "NAME",
        description = "Who does this (journaled). Default: $USER.")
    String operator;

    URI uri(String path) {
      String h = host != null ? host : env("GATEWAY_HOST", "127.0.0.1");
      int p = port != null ? port : Integer.parseInt(env("GATEWAY_PORT", "8787"));
      return URI.create("http://" + (h.contains(":") ? "[" + h + "]" : h) + ":" + p + path);
    }

    String adminToken() {
      String t = adminToken != null ? adminToken : env("GATEWAY_ADMIN_TOKEN", null);
      if (t == null || t.isBlank()) {
        throw new IllegalStateException("no admin token: set GATEWAY_ADMIN_TOKEN (the operator's token, not "
            + "GATEWAY_TOKEN) or pass --admin-token");
      }
      return t;
    }

    String operator() {
      return operator != null ? operator : env("USER", System.getProperty("user.name", "operator"));
    }

    private String env(String name, String fallback) {
      String v = ((GatewayAdmin) mixee.root().userObject()).env.apply(name);
      return v == null || v.isBlank() ? fallback : v;
    }
  }

  /** How long a write verb waits for the gateway's answer. */
  static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);

  /** POSTs {@code body} (JSON) to the gateway; prints the answer; 0 on 2xx, 1 otherwise. */
  static int post(CommandLine.Model.CommandSpec spec, GatewayOptions gateway, String path, Map<String, Object> body)
      throws IOException, InterruptedException {
    HttpRequest request = request(gateway, path, body);
    HttpResponse<String> response;
    try {
      response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    } catch (java.net.ConnectException e) {
      throw new IllegalStateException(unreachable(gateway));
    }
    return printAnswer(spec, response);
  }

  /**
   * POSTs an adjustment (credit or adjust) under {@code adjustmentId}, which the gateway applies at
   * most once. Says the id before sending; when the outcome is unknown (no answer in time, a broken
   * connection, a 5xx) adds how to rerun safely. 0 on 2xx, 1 on another answer, 2 on no answer.
   */
  static int postAdjustment(CommandLine.Model.CommandSpec spec, GatewayOptions gateway, String path,
      Map<String, Object> body, String adjustmentId) throws IOException, InterruptedException {
    body.put("adjustmentId", adjustmentId);
    HttpRequest request = request(gateway, path, body);
    PrintWriter err = spec.commandLine().getErr();
    err.println("adjustment id: " + adjustmentId);
    err.flush();
    HttpResponse<String> response;
    try {
      response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      err.println("gateway-admin: " + noAnswer(e, gateway));
      err.println(safeRetry(adjustmentId));
      err.flush();
      return FAILED;
    }
    int exit = printAnswer(spec, response);
    if (response.statusCode() >= 500) {
      err.println(safeRetry(adjustmentId));
      err.flush();
    }
    return exit;
  }

  private static HttpRequest request(GatewayOptions gateway, String path, Map<String, Object> body) throws IOException {
    String json = new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(body);
    return HttpRequest.newBuilder(gateway.uri(path))
        .timeout(ANSWER_TIMEOUT)
        .header("authorization", "Bearer " + gateway.adminToken())
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8))
        .build();
  }

  /** The body on stdout for a 2xx (0), else {@code HTTP <status> <body>} on stderr (1). */
  private static int printAnswer(CommandLine.Model.CommandSpec spec, HttpResponse<String> response) {
    boolean ok = response.statusCode() / 100 == 2;
    PrintWriter out = ok ? spec.commandLine().getOut() : spec.commandLine().getErr();
    out.println(ok ? response.body() : "HTTP " + response.statusCode() + " " + response.body());
    out.flush();
    return ok ? 0 : VIOLATION;
  }

  private static String unreachable(GatewayOptions gateway) {
    return "cannot reach the gateway at " + gateway.uri("") + " (is it running? "
        + "GATEWAY_HOST/GATEWAY_PORT or --host/--port)";
  }

  private static String noAnswer(IOException e, GatewayOptions gateway) {
    if (e instanceof java.net.ConnectException) {
      return unreachable(gateway);
    }
    if (e instanceof java.net.http.HttpTimeoutException) {
      return "no answer from the gateway within " + ANSWER_TIMEOUT.toSeconds() + " s; the adjustment may or may not "
          + "have been applied";
    }
    return "the connection to the gateway failed (" + e.getClass().getSimpleName()
        + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "); the adjustment may or may not have been applied";
  }

  private static String safeRetry(String adjustmentId) {
    return "to retry safely, run the same command again with --id " + adjustmentId
        + " (the gateway applies an adjustment id at most once)";
  }

  /** {@code --reason} of every write verb: each admin write is journaled with who and why. */
  static final class ReasonOption {
    @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "Why (journaled).")
    String reason;

    /** Adds the reason and the operator ({@code --operator}, else {@code $USER}) to {@code body}. */
    void addTo(Map<String, Object> body, GatewayOptions gateway) {
      body.put("reason", reason);
      body.put("operator", gateway.operator());
    }
  }

  /** {@code --id} of credit and adjust. */
  static final class AdjustmentIdOption {
    @Option(names = "--id", paramLabel = "ID",
        description = "Adjustment id, 1-64 characters of [A-Za-z0-9._:-] (e.g. ticket-812-refund). The gateway applies "
            + "an id at most once: rerunning with the same --id after a timeout or error is safe; the same id with "
            + "other values is refused (HTTP 409). Default: a new adj-<uuid>, printed before sending.")
    String id;

    String idOrNew() {
      return id != null ? id : "adj-" + UUID.randomUUID();
    }
  }

  /** {@code --window} and {@code --scope} of credit and adjust: which window, and whose caps. */
  static final class TargetOptions {
    @Option(names = "--window", required = true, paramLabel = "DAY|MONTH",
        description = "The UTC day (2026-11-29) or month (2026-11) the correction is for. Only the cap windows "
            + "containing it move: a refund for yesterday lowers yesterday and this month, never today's daily caps.")
    String window;

    @Option(names = "--scope", required = true, paramLabel = "grant|refund",
        description = "grant: only the brand's (or preview's) own caps (the company gives the brand room); refund: "
            + "the lane pool and the global caps too (the provider gave money back, or a missed bill is charged).")
    String scope;

    void addTo(Map<String, Object> body) {
      body.put("window", window);
      body.put("scope", scope);
    }
  }

  @Command(name = "credit", mixinStandardHelpOptions = true,
      description = {
        "Give a brand money back, through the running gateway.",
        "Lowers the brand's settled spend by USD in the windows containing --window; with --scope refund the",
        "global caps' too. Journaled as SpendAdjusted with operator and reason.",
        "Applied at most once per adjustment id (--id): after a timeout or error, rerun with the id it printed."})
  static final class Credit implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Mixin AdjustmentIdOption adjustmentId;

    @Option(names = "--brand", required = true, paramLabel = "BRAND", description = "The brand id.")
    String brand;

    @Option(names = "--usd", required = true, paramLabel = "USD", description = "Amount to credit (positive).")
    BigDecimal usd;

    @Mixin TargetOptions target;

    @Mixin ReasonOption why;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("usd", usd);
      target.addTo(body);
      why.addTo(body, gateway);
      return postAdjustment(spec, gateway, "/admin/brands/" + encode(brand) + "/credit", body, adjustmentId.idOrNew());
    }
  }

  @Command(name = "adjust", mixinStandardHelpOptions = true,
      description = {
        "Correct settled spend on a lane's caps, through the running gateway.",
        "Moves the windows containing --window by a signed USD amount (positive = charge a missed cost,",
        "negative = credit). Journaled as SpendAdjusted with operator and reason.",
        "Applied at most once per adjustment id (--id): after a timeout or error, rerun with the id it printed."})
  static final class Adjust implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Mixin AdjustmentIdOption adjustmentId;

    @Option(names = "--lane", defaultValue = "app", paramLabel = "LANE", description = "app, trial or free (default app).")
    String lane;

    @Option(names = "--brand", paramLabel = "SUBJECT", description = "Brand (app) or preview id (trial).")
    String brand;

    @Option(names = "--usd", required = true, paramLabel = "USD", description = "Signed amount.")
    BigDecimal usd;

    @Mixin TargetOptions target;

    @Mixin ReasonOption why;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("lane", lane);
      body.put("brand", brand);
      body.put("deltaUsd", usd);
      target.addTo(body);
      why.addTo(body, gateway);
      return postAdjustment(spec, gateway, "/admin/adjustments", body, adjustmentId.idOrNew());
    }
  }

  @Command(name = "settle", mixinStandardHelpOptions = true,
      description = "Settle an open reservation at USD on the caller's behalf. Journaled with operator and reason.")
  static final class Settle implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Parameters(index = "0", paramLabel = "ID", description = "Reservation id.")
    String id;

    @Option(names = "--usd", required = true, paramLabel = "USD", description = "Actual cost.")
    BigDecimal usd;

    @Mixin ReasonOption why;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("actualUsd", usd);
      why.addTo(body, gateway);
      return post(spec, gateway, "/admin/reservations/" + encode(id) + "/settle", body);
    }
  }

  @Command(name = "void", mixinStandardHelpOptions = true,
      description = "Void an open reservation (close at $0: the provider did not bill). Journaled with operator and reason.")
  static final class VoidReservation implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Parameters(index = "0", paramLabel = "ID", description = "Reservation id.")
    String id;

    @Mixin ReasonOption why;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      Map<String, Object> body = new LinkedHashMap<>();
      why.addTo(body, gateway);
      return post(spec, gateway, "/admin/reservations/" + encode(id) + "/void", body);
    }
  }

  @Command(name = "status", mixinStandardHelpOptions = true,
      description = {
        "Show the running gateway: ready or not, the global and pool caps, open reservations, each provider's",
        "circuit breaker and the models whose circuit a 410 opened (GET /admin/status, admin token).",
        "Exit 0 when ready, 1 when not (the ledger has not recovered), 2 when the gateway did not answer."})
  static final class Status implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      HttpRequest request = HttpRequest.newBuilder(gateway.uri("/admin/status")).timeout(ANSWER_TIMEOUT)
          .header("authorization", "Bearer " + gateway.adminToken()).GET().build();
      HttpResponse<String> response;
      try {
        response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
      } catch (java.net.ConnectException e) {
        throw new IllegalStateException(unreachable(gateway));
      }
      int exit = printAnswer(spec, response);
      if (exit == 0 && response.body().contains("\"ready\":false")) {
        return VIOLATION;
      }
      return exit;
    }
  }

  @Command(name = "reset-circuit", mixinStandardHelpOptions = true,
      description = {
        "Close a model's circuit that a provider's 410 (model gone) opened, after fixing the catalog or the",
        "profile (POST /admin/circuits/MODEL/reset, admin token). Until then the router does not call that model."})
  static final class ResetCircuit implements Callable<Integer> {
    @Mixin GatewayOptions gateway;

    @Parameters(index = "0", paramLabel = "MODEL", description = "The model id, as in conf/models.conf.")
    String model;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      return post(spec, gateway, "/admin/circuits/" + encode(model) + "/reset", new LinkedHashMap<>());
    }
  }

  private static String encode(String segment) {
    return java.net.URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static PrintStream errStream(CommandLine.Model.CommandSpec spec) {
    PrintWriter err = spec.commandLine().getErr();
    return new PrintStream(new java.io.OutputStream() {
      @Override
      public void write(int b) {
        err.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) {
        err.write(new String(b, off, len, StandardCharsets.UTF_8));
        err.flush();
      }
    }, true, StandardCharsets.UTF_8);
  }
}
