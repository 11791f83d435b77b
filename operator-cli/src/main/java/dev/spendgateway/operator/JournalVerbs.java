package dev.spendgateway.operator;

import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.ledger.audit.AllowanceAudit;
import dev.spendgateway.ledger.audit.AuditRuns;
import dev.spendgateway.ledger.audit.JournalReader.Snapshot;
import dev.spendgateway.ledger.audit.Journaled;
import dev.spendgateway.ledger.audit.JsonlEvents;
import dev.spendgateway.ledger.audit.LedgerAudit;
import dev.spendgateway.ledger.audit.Progress;
import dev.spendgateway.ledger.audit.UsageReport;
import dev.spendgateway.ledger.audit.Violation;
import dev.spendgateway.ledger.ops.DataDirs;
import dev.spendgateway.ledger.ops.DurableFiles;
import dev.spendgateway.ledger.ops.FileJournalLock;
import dev.spendgateway.ledger.ops.JournalDatabase;
import dev.spendgateway.ledger.ops.LockHolder;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongConsumer;
import java.util.stream.Stream;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The verbs that read the journal: {@code replay}, {@code verify}, {@code export}, {@code tail}.
 * Read-only, also while the gateway runs (see {@link JournalOptions}); the ledger's own audit
 * library ({@code dev.spendgateway.ledger.audit}) does the folding and the checks.
 */
final class JournalVerbs {
  private JournalVerbs() {}

  @Command(
      name = "replay",
      mixinStandardHelpOptions = true,
      description = {
        "Rebuild the books from the journal and print every cap like GET /usage.",
        "Reads the journal read-only; works while the gateway runs and on a copied data dir.",
        "Progress (events/s) goes to stderr every second."
      })
  static final class Replay implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(
        names = "--until",
        paramLabel = "TIME",
        description =
            "Stop after the last event at or before TIME (ISO-8601 instant, e.g. "
                + "2026-11-30T12:00:00Z) and show the cap windows of TIME. Default: every event, "
                + "windows of now.")
    Instant until;

    @Option(names = "--json", description = "Print the JSON body GET /usage would answer.")
    boolean json;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      try (JournalSession session = new JournalSession(journal)) {
        Progress progress = new Progress(errStream(spec), "replay");
        LedgerAudit audit =
            session.await(
                AuditRuns.replay(
                    session.system,
                    session.reader.current(1),
                    Optional.ofNullable(until),
                    session.newAudit(),
                    progress));
        progress.finish();
        var usage = audit.usage(until != null ? until : Clock.systemUTC().instant());
        PrintWriter out = spec.commandLine().getOut();
        out.print(json ? UsageReport.json(usage) + "\n" : UsageReport.table(usage));
        out.flush();
        return 0;
      }
    }
  }

  @Command(
      name = "verify",
      mixinStandardHelpOptions = true,
      description = {
        "Check that every cap held at every event of the journal; exit 1 naming the first "
            + "violation.",
        "Replays the journal and checks, at every event:",
        "  no reservation accepted past a cap (global, pool, preview, brand as sent),",
        "  every reservation closed at most once, every adjustment id applied at most once,",
        "  the replayed totals equal the latest snapshot's at its sequence number,",
        "  every allowance transfer taken out at most once and within the headroom it had, taken"
            + " in at most once;",
        "  with --peer-export: no transfer taken in for more than it was taken out.",
        "Exit 0 when all hold; exit 1 naming the first violating event (sequence number and what "
            + "broke).",
        "Caps are checked against the configured ones: verify with the caps the journal was "
            + "written under."
      })
  static final class Verify implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(
        names = "--input",
        paramLabel = "FILE",
        description =
            "Verify an export (export --format jsonl) instead of the journal; no "
                + "snapshot check.")
    Path input;

    @Option(
        names = "--peer-export",
        paramLabel = "FILE",
        description =
            "An export (export --format jsonl) of another region's journal (repeatable): every"
                + " allowance transfer taken in must have been taken out, by the region it names,"
                + " for at least as much (docs/MULTI-REGION.md).")
    List<Path> peerExports = List.of();

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      try (JournalSession session = new JournalSession(journal, input == null)) {
        Progress progress = new Progress(errStream(spec), "verify");
        Optional<Snapshot> snapshot = Optional.empty();
        Optional<String> unreadableSnapshot = Optional.empty();
        Source<Journaled, NotUsed> events;
        Stream<Journaled> file = null;
        if (input != null) {
          file = new JsonlEvents().read(input);
          Stream<Journaled> lines = file;
          events = Source.fromJavaStream(() -> lines);
        } else {
          try {
            snapshot = session.reader.latestSnapshot(Duration.ofSeconds(60));
          } catch (Exception e) {
            // Optional to the ledger too: it replays the whole journal, the next one replaces it.
            unreadableSnapshot = Optional.of(JournalDatabase.firstLine(e));
          }
          events = session.reader.current(1);
        }
        LedgerAudit audit = session.newAudit();
        Optional<Violation> violation;
        try {
          violation =
              session.await(AuditRuns.verify(session.system, events, snapshot, audit, progress));
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
          return GatewayAdmin.VIOLATION;
        }
        if (!peerExports.isEmpty()) {
          AllowanceAudit transfers = new AllowanceAudit().add(audit.state());
          for (Path peer : peerExports) {
            transfers.add(replayedExport(peer));
          }
          List<String> broken = transfers.violations();
          if (!broken.isEmpty()) {
            broken.forEach(b -> out.println("VIOLATION across regions: " + b));
            out.flush();
            return GatewayAdmin.VIOLATION;
          }
          out.printf(
              "OK across %d journals: every allowance transfer taken in was taken out (%d in"
                  + " flight)%n",
              peerExports.size() + 1, transfers.inFlight());
        }
        out.printf(
            "OK: %d events verified (journal rows up to sequence number %d)%s%n",
            audit.events(),
            audit.lastSequenceNr(),
            snapshot
                .map(
                    s ->
                        s.sequenceNr() <= audit.lastSequenceNr()
                            ? "; totals equal the snapshot at " + s.sequenceNr()
                            : "; snapshot at " + s.sequenceNr() + " is past the journal's end")
                .orElse(
                    unreadableSnapshot
                        .map(
                            cause ->
                                "; the newest snapshot could not be loaded ("
                                    + cause
                                    + "), so totals were not compared with it (the ledger"
                                    + " replays the whole journal instead; the next snapshot"
                                    + " replaces it)")
                        .orElse("; no snapshot")));
        out.flush();
        return 0;
      }
    }
  }

  /** Another region's export replayed with the ledger's fold (its own checks are its verify's). */
  static LedgerState replayedExport(Path export) {
    LedgerState state = LedgerState.empty();
    try (Stream<Journaled> events = new JsonlEvents().read(export)) {
      for (Journaled j : (Iterable<Journaled>) events::iterator) {
        state = state.applied(j.event());
      }
    }
    return state;
  }

  @Command(
      name = "export",
      mixinStandardHelpOptions = true,
      description = {
        "Write the journal's events as JSON lines.",
        "One per line: {\"seq\":N,\"type\":\"ReservationMade\",\"event\":{...}}.",
        "Money in integer micro-dollars, instants ISO-8601 UTC; every event carries its schema "
            + "version v."
      })
  static final class Export implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(
        names = "--format",
        defaultValue = "jsonl",
        paramLabel = "FORMAT",
        description = "Only jsonl.")
    String format;

    @Option(
        names = "--from",
        defaultValue = "1",
        paramLabel = "SEQ",
        description = "First sequence number (default 1).")
    long from;

    @Option(
        names = {"-o", "--output"},
        paramLabel = "FILE",
        description = "Write here instead of stdout.")
    Path output;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (!format.equals("jsonl")) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--format: only jsonl is supported");
      }
      // -o is written whole or not at all: into FILE.partial, moved over FILE once complete, so
      // an export that fails (or is killed) never replaces FILE with the rows before the failure.
      Path partial =
          output == null ? null : output.resolveSibling(output.getFileName() + ".partial");
      boolean complete = false;
      try (JournalSession session = new JournalSession(journal);
          PrintWriter out =
              partial == null ? null : new PrintWriter(Files.newBufferedWriter(partial))) {
        PrintWriter target = out != null ? out : spec.commandLine().getOut();
        JsonlEvents jsonl = new JsonlEvents();
        Progress progress = new Progress(errStream(spec), "export");
        session.await(
            session
                .reader
                .current(from)
                .runWith(
                    Sink.foreach(
                        j -> {
                          target.println(jsonl.line(j));
                          progress.tick();
                        }),
                    session.system));
        target.flush();
        if (out != null && out.checkError()) {
          throw new java.io.IOException("cannot write " + partial);
        }
        complete = true;
        progress.finish();
      } finally {
        if (partial != null) {
          if (complete) {
            // Flushed, then renamed: a power cut leaves the old FILE or the whole new one.
            DurableFiles.moveIntoPlace(partial, output);
          } else {
            Files.deleteIfExists(partial);
          }
        }
      }
      return 0;
    }
  }

  @Command(
      name = "tail",
      mixinStandardHelpOptions = true,
      description = {
        "Follow the journal: print new events as JSON lines as they are written.",
        "Same format as export.",
        "Polls every jdbc-read-journal.refresh-interval (1s). Stop with Ctrl-C."
      })
  static final class Tail implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(
        names = "--from",
        paramLabel = "SEQ",
        description =
            "Start at this sequence number. Default: after the last event now in the " + "journal.")
    Long from;

    @Option(
        names = "--limit",
        paramLabel = "N",
        description = "Stop after N events (default: follow forever).")
    Long limit;

    @Spec CommandLine.Model.CommandSpec spec;

    /**
     * Told the first sequence number once tail has chosen it: every row written from then on is
     * printed. Nothing by default; a test waits on it instead of sleeping.
     */
    LongConsumer following = start -> {};

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
        // Reading through a running gateway's database server: that server goes when the gateway
        // does, and a restarted gateway serves the journal elsewhere. Say so rather than wait.
        Optional<Path> dataDir =
            session.config.hasPath(DataDirs.KEY)
                ? Optional.of(Path.of(session.config.getString(DataDirs.KEY)))
                : Optional.empty();
        Optional<LockHolder> through = dataDir.flatMap(FileJournalLock::liveHolder);
        following.accept(start);
        CompletableFuture<Done> done =
            live.runWith(
                    Sink.foreach(
                        j -> {
                          out.println(jsonl.line(j));
                          out.flush();
                        }),
                    session.system)
                .toCompletableFuture();
        while (true) {
          try {
            done.get(1, TimeUnit.SECONDS);
            return 0;
          } catch (TimeoutException stillFollowing) {
            if (through.isPresent() && !sameHolder(through.get(), dataDir.get())) {
              throw new IllegalStateException(
                  "the gateway serving the journal in "
                      + dataDir.get()
                      + " ("
                      + through.get().describe()
                      + ") has stopped; tail cannot follow it further: run tail again once a "
                      + "gateway runs there");
            }
          }
        }
      }
    }

    private static boolean sameHolder(LockHolder holder, Path dataDir) {
      return FileJournalLock.liveHolder(dataDir)
          .map(now -> now.pid() == holder.pid() && now.since().equals(holder.since()))
          .orElse(false);
    }
  }

  /** The command's stderr as a stream (progress lines), flushed at every write. */
  static PrintStream errStream(CommandLine.Model.CommandSpec spec) {
    PrintWriter err = spec.commandLine().getErr();
    return new PrintStream(
        new OutputStream() {
          @Override
          public void write(int b) {
            err.write(b);
          }

          @Override
          public void write(byte[] b, int off, int len) {
            err.write(new String(b, off, len, StandardCharsets.UTF_8));
            err.flush();
          }
        },
        true,
        StandardCharsets.UTF_8);
  }
}
