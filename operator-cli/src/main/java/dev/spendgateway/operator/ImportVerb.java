package dev.spendgateway.operator;

import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.audit.JournalImport;
import dev.spendgateway.ledger.audit.Journaled;
import dev.spendgateway.ledger.audit.JsonlEvents;
import dev.spendgateway.ledger.audit.Progress;
import dev.spendgateway.ledger.journal.JournalSchema;
import dev.spendgateway.ledger.ops.DataDirs;
import dev.spendgateway.ledger.ops.JournalInUseException;
import dev.spendgateway.ledger.ops.JournalLock;
import java.io.BufferedReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code gateway-admin import --input FILE [--journal-url URL]}: writes an export into an empty
 * journal (see {@link JournalImport}); how an H2 journal moves to PostgreSQL. Run it with every
 * gateway stopped: a running ledger would be a second writer (the journal's key would refuse one of
 * them).
 */
@Command(
    name = "import",
    mixinStandardHelpOptions = true,
    description = {
      "Write an export (gateway-admin export --format jsonl) into an EMPTY journal, e.g. a new "
          + "PostgreSQL one.",
      "Tables are created if missing; a journal that already holds events is refused.",
      "Rows keep their sequence numbers (one row per original group commit). Stop every gateway "
          + "first."
    })
final class ImportVerb implements Callable<Integer> {
  private static final Duration ASK = Duration.ofSeconds(60);

  @Mixin JournalOptions journal;

  @Option(
      names = "--input",
      required = true,
      paramLabel = "FILE",
      description = "The JSON lines export to import.")
  Path input;

  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    checkWhole();
    // The import is a writer: it holds the journal's lock as a gateway does, so it never writes
    // behind a running ledger's back (over H2's AUTO_SERVER, or into a PostgreSQL journal a
    // gateway uses) and no gateway starts on a half-imported journal meanwhile.
    try (JournalLock.Lease lease = lockJournal();
        JournalSession session = new JournalSession(journal, false)) {
      session.await(JournalSchema.createIfNotExists(session.system));
      ActorRef<JournalImport.Command> writer =
          session.system.systemActorOf(JournalImport.create(), "import", Props.empty());
      long present =
          session.await(
              AskPattern.ask(
                  writer, JournalImport.RowsPresent::new, ASK, session.system.scheduler()));
      if (present > 0) {
        spec.commandLine()
            .getErr()
            .println(
                "gateway-admin: the target journal already holds "
                    + present
                    + " rows; import writes only into an empty journal");
        return GatewayAdmin.FAILED;
      }
      JsonlEvents jsonl = new JsonlEvents();
      Progress progress = new Progress(System.err, "import");
      long rows = 0;
      long facts = 0;
      try (BufferedReader lines = Files.newBufferedReader(input)) {
        List<Event> row = new ArrayList<>();
        long rowSeq = -1;
        String line;
        while ((line = lines.readLine()) != null) {
          if (line.isBlank()) {
            continue;
          }
          Journaled j = jsonl.parse(line);
          // The facts of one original row share its sequence number: they go back as one row.
          if (j.sequenceNr() != rowSeq && !row.isEmpty()) {
            write(session, writer, rowSeq, row);
            rows++;
            row = new ArrayList<>();
          }
          rowSeq = j.sequenceNr();
          row.add(j.event());
          facts++;
          progress.tick();
        }
        if (!row.isEmpty()) {
          write(session, writer, rowSeq, row);
          rows++;
        }
      }
      progress.finish();
      spec.commandLine().getOut().printf("OK: imported %d events in %d rows%n", facts, rows);
      spec.commandLine().getOut().flush();
      return 0;
    }
  }

  /**
   * Reads the whole export once before anything is written: every line an event, rows numbered from
   * 1 without a gap. An export cut short (killed mid-write) or hand-edited into a gap was otherwise
   * written up to the bad line, leaving a partial history in the target that a second import then
   * refused as not empty.
   */
  private void checkWhole() {
    long rowSeq = 0;
    long lineNumber = 0;
    JsonlEvents jsonl = new JsonlEvents();
    try (BufferedReader lines = Files.newBufferedReader(input)) {
      String line;
      while ((line = lines.readLine()) != null) {
        lineNumber++;
        if (line.isBlank()) {
          continue;
        }
        long seq;
        try {
          seq = jsonl.parse(line).sequenceNr();
        } catch (IllegalArgumentException e) {
          throw refused(lineNumber, e.getMessage());
        }
        if (seq < 1 || (seq != rowSeq && seq != rowSeq + 1)) {
          throw refused(
              lineNumber,
              "row "
                  + seq
                  + " after row "
                  + rowSeq
                  + " (an export from sequence number 1 without gaps is needed)");
        }
        rowSeq = seq;
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot read " + input + ": " + e.getMessage(), e);
    }
  }

  private IllegalStateException refused(long lineNumber, String why) {
    return new IllegalStateException(
        input + " line " + lineNumber + ": " + why + "; nothing was imported");
  }

  /** The journal's lock, or a one-line refusal naming the gateway that holds it. */
  private JournalLock.Lease lockJournal() {
    try {
      return JournalLock.forJournal(journal.load(false)).acquire();
    } catch (JournalInUseException e) {
      throw new IllegalStateException(
          e.holder()
              .map(
                  holder ->
                      "the journal in "
                          + journal.load(false).getString(DataDirs.KEY)
                          + " is in use by a running gateway ("
                          + holder.describe()
                          + "); stop it before importing: import writes only into a journal no "
                          + "ledger runs on")
              .orElse(e.getMessage() + "; stop it before importing"),
          e);
    }
  }

  private static void write(
      JournalSession session, ActorRef<JournalImport.Command> writer, long seq, List<Event> facts)
      throws Exception {
    List<Event> copy = List.copyOf(facts);
    session.await(
        AskPattern.ask(
            writer,
            (ActorRef<Long> replyTo) -> new JournalImport.WriteRow(seq, copy, replyTo),
            ASK,
            session.system.scheduler()));
  }
}
