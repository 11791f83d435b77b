package dev.spendgateway.operator;

import dev.spendgateway.ledger.audit.AuditConfig;
import dev.spendgateway.ledger.ops.JournalDatabase;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code backup} and {@code restore} of the H2 journal file ({@link JournalDatabase} does the
 * copying); a PostgreSQL journal is backed up with that database's own tools.
 */
final class BackupVerbs {
  private BackupVerbs() {}

  @Command(
      name = "backup",
      mixinStandardHelpOptions = true,
      description = {
        "Write a consistent copy of the journal (H2 BACKUP TO, a zip holding ledger.mv.db).",
        "Safe while the gateway runs and writes (it makes the copy); never creates a database: a "
            + "data dir without a journal is an error. Restore it with: bin/gateway-admin restore "
            + "FILE --data-dir EMPTY_DIR."
      })
  static final class Backup implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Option(
        names = {"-o", "--output"},
        required = true,
        paramLabel = "FILE.zip",
        description = "The backup file to write; must not exist yet.")
    Path output;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      // The configured journal, not the URL a read is made with (over a running gateway's server
      // that is no file URL); backup() checks the file is there and opens it the operator's way.
      JournalDatabase db =
          JournalDatabase.of(journal.load(false))
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "the journal is not an H2 file database; "
                              + "back it up with that database's own tools"));
      db.backup(output, AuditConfig.OPEN_TIMEOUT);
      PrintWriter out = spec.commandLine().getOut();
      out.println(
          "backup of "
              + db.file()
              + " written to "
              + output.toAbsolutePath().normalize()
              + " ("
              + Files.size(output)
              + " bytes); check it: bin/gateway-admin restore "
              + output
              + " --data-dir /tmp/check && bin/gateway-admin verify --data-dir /tmp/check");
      out.flush();
      return 0;
    }
  }

  @Command(
      name = "restore",
      mixinStandardHelpOptions = true,
      description = {
        "Put the journal from a backup zip into a data dir that has no journal yet.",
        "Refuses a data dir that holds a journal (move ledger.mv.db aside first: books are never "
            + "overwritten)",
        "or that a running gateway holds. Then: bin/gateway-admin verify --data-dir DIR, and start the "
            + "gateway on it."
      })
  static final class Restore implements Callable<Integer> {
    @Mixin JournalOptions journal;

    @Parameters(
        index = "0",
        paramLabel = "FILE.zip",
        description = "A backup written by gateway-admin backup.")
    Path backup;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      JournalDatabase db =
          JournalDatabase.of(journal.load(false))
              .orElseThrow(
                  () ->
                      new IllegalStateException(
                          "the journal is not an H2 file database; "
                              + "restore it with that database's own tools"));
      db.restore(backup, AuditConfig.OPEN_TIMEOUT);
      PrintWriter out = spec.commandLine().getOut();
      out.println(
          "restored "
              + backup
              + " into "
              + db.file()
              + "; check it: bin/gateway-admin verify "
              + "--data-dir "
              + db.dataDir());
      out.flush();
      return 0;
    }
  }
}
