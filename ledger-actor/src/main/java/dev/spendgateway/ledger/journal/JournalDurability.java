package dev.spendgateway.ledger.journal;

import com.typesafe.config.Config;

/**
 * Whether the ledger's journal confirms a write only once it is on disk ({@code
 * ledger.journal.sync}, see conf/ledger.conf), and the check that the configuration actually does
 * what it says.
 */
public final class JournalDurability {
  /** The {@code jdbc-journal.dao} that flushes each write before confirming it. */
  public static final String DAO = DurableJournalDao.class.getName();

  static final String SYNC_KEY = "ledger.journal.sync";
  static final String PIPELINE_KEY = "ledger.journal.pipeline";
  static final String FLUSH_KEY = "ledger.journal.flush";
  static final String LAZY_FLUSH_KEY = "ledger.journal.close-flush-delay";
  static final String CLOSE_LINGER_KEY = "ledger.journal.close-linger";

  private JournalDurability() {}

  /**
   * True unless {@code ledger.journal.sync} is off. Absent counts as on: whoever configured {@link
   * DurableJournalDao} wanted its flush.
   */
  public static boolean syncRequested(Config config) {
    return !config.hasPath(SYNC_KEY) || config.getBoolean(SYNC_KEY);
  }

  /**
   * True when {@code ledger.journal.pipeline} is on (absent: off): the journal confirms a write at
   * commit and the ledger holds its answers until the flush ({@link JournalWriter#afterCommit}).
   */
  public static boolean pipelined(Config config) {
    return config.hasPath(PIPELINE_KEY) && config.getBoolean(PIPELINE_KEY);
  }

  /**
   * How long a gateway's own settle or void, answered at commit (pipeline on or off), may wait for
   * a flush when no other write asks for one ({@code ledger.journal.close-flush-delay}; absent: 200
   * ms).
   */
  public static java.time.Duration closeFlushDelay(Config config) {
    return config.hasPath(LAZY_FLUSH_KEY)
        ? config.getDuration(LAZY_FLUSH_KEY)
        : java.time.Duration.ofMillis(200);
  }

  /**
   * How long the gateway's own settles and voids wait for another command to be written with when
   * the ledger's write slot is free ({@code ledger.journal.close-linger}; absent: 0, sent at once).
   */
  public static java.time.Duration closeLinger(Config config) {
    return config.hasPath(CLOSE_LINGER_KEY)
        ? config.getDuration(CLOSE_LINGER_KEY)
        : java.time.Duration.ZERO;
  }

  /**
   * True when {@code ledger.journal.flush} is {@code checkpoint-sync} (H2's SQL statement, kept to
   * measure against); absent or {@code store-and-force}: {@link H2Flush}.
   *
   * @throws IllegalArgumentException for any other value, naming the key and the values it takes
   */
  public static boolean checkpointSync(Config config) {
    String flush = config.hasPath(FLUSH_KEY) ? config.getString(FLUSH_KEY) : "store-and-force";
    return switch (flush) {
      case "store-and-force" -> false;
      case "checkpoint-sync" -> true;
      default ->
          throw new IllegalArgumentException(
              FLUSH_KEY
                  + " = '"
                  + flush
                  + "': use store-and-force (the default) or checkpoint-sync");
    };
  }

  /**
   * Refuses a configuration that asks for a flushed journal ({@code ledger.journal.sync = on}) but
   * would not get one: the JDBC journal with another DAO confirms writes that only reached the OS's
   * cache. Configurations without the key (tests on the in-memory journal) pass.
   *
   * @throws IllegalArgumentException naming the keys to fix
   */
  public static void requireConsistent(Config config) {
    checkpointSync(config); // a misspelt flush is refused at start, not at the first write
    if (!config.hasPath(SYNC_KEY) || !config.getBoolean(SYNC_KEY)) {
      return;
    }
    String plugin =
        config.hasPath("pekko.persistence.journal.plugin")
            ? config.getString("pekko.persistence.journal.plugin")
            : "";
    if (!plugin.equals("jdbc-journal")) {
      return; // another journal plugin answers for its own durability
    }
    String dao = config.hasPath("jdbc-journal.dao") ? config.getString("jdbc-journal.dao") : "";
    if (!dao.equals(DAO)) {
      throw new IllegalArgumentException(
          SYNC_KEY
              + " = on but jdbc-journal.dao is '"
              + dao
              + "': that DAO"
              + " confirms writes before they are on disk, so a power loss would lose acknowledged reservations."
              + " Set jdbc-journal.dao = \""
              + DAO
              + "\" (conf/ledger.conf) or "
              + SYNC_KEY
              + " = off.");
    }
  }
}
