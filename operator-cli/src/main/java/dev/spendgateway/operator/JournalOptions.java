package dev.spendgateway.operator;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.audit.AuditConfig;
import java.nio.file.Path;
import java.util.Optional;
import picocli.CommandLine.Option;

/** Where the journal is: the data dir and the config naming the database (a verbs' mixin). */
final class JournalOptions {
  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description =
          "Directory holding the H2 journal (ledger.mv.db). Default: $GATEWAY_DATA_DIR, "
              + "else ./data.")
  Path dataDir;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description =
          "HOCON config naming the journal database and the caps. Default: the gateway's "
              + "conf/application.conf (bin/gateway-admin puts conf/ on the class path).")
  Path config;

  @Option(
      names = "--journal-url",
      paramLabel = "JDBC_URL",
      description =
          "A PostgreSQL journal (cluster mode) instead of the H2 file. Default: "
              + "$GATEWAY_JOURNAL_URL (with $GATEWAY_JOURNAL_USER, $GATEWAY_JOURNAL_PASSWORD), else "
              + "the H2 journal under the data dir.")
  String journalUrl;

  /** The configuration of an existing journal, opened read-only (see {@link AuditConfig}). */
  Config load() {
    return load(true);
  }

  /**
   * @param requireJournal whether a missing H2 journal file is an error (not: import, restore)
   */
  Config load(boolean requireJournal) {
    return AuditConfig.load(
        Optional.ofNullable(config),
        Optional.ofNullable(dataDir),
        Optional.ofNullable(journalUrl),
        requireJournal);
  }
}
