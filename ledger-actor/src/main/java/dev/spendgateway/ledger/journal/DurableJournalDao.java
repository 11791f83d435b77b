package dev.spendgateway.ledger.journal;

import com.typesafe.config.Config;
import java.sql.Statement;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.Scheduler;
import org.apache.pekko.persistence.AtomicWrite;
import org.apache.pekko.persistence.PersistentRepr;
import org.apache.pekko.persistence.jdbc.config.JournalConfig;
import org.apache.pekko.persistence.jdbc.journal.dao.DefaultJournalDao;
import org.apache.pekko.persistence.jdbc.journal.dao.JournalDao;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.scaladsl.Source;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.Tuple2;
import scala.collection.immutable.Seq;
import scala.concurrent.ExecutionContext;
import scala.concurrent.Future;
import scala.concurrent.duration.FiniteDuration;
import scala.jdk.javaapi.FutureConverters;
import scala.runtime.BoxedUnit;
import scala.util.Try;
import slick.dbio.DBIOAction;
import slick.jdbc.H2Profile;
import slick.jdbc.JdbcBackend;
import slick.jdbc.JdbcProfile;
import slick.jdbc.SimpleJdbcAction;

/**
 * The journal DAO of the ledger (configured as {@code jdbc-journal.dao}): pekko-persistence-jdbc's
 * own {@link DefaultJournalDao}, except that a write is confirmed only once it is <em>on disk</em>.
 *
 * <p>Why: embedded H2 2.x writes a commit to the file within its {@code WRITE_DELAY} and never
 * forces it; {@code FileChannel.force} runs only on a clean close or {@code CHECKPOINT SYNC}.
 * Without that, a killed process loses the commits not yet written and a power cut or VM reset
 * those the OS had not yet written back — reservations the caller was already told about. ({@code
 * WRITE_DELAY=0} would write at once but stops H2's background housekeeping, and the file then
 * grows for good.)
 *
 * <p>How: after each {@code asyncWriteMessages} call has committed (the ledger group-commits, so
 * one call holds a whole batch), {@link H2Flush} stores the commit and forces the file before the
 * returned future completes (or, with {@code ledger.journal.pipeline}, before the ledger answers).
 * Pekko runs the persist callback, and so the ledger answers, only when that future completes.
 * Writes that commit while a sync runs share the next one ({@link GroupSync}): at most one sync per
 * write, never a write without one. A failed sync fails its writes (the ledger then answers nobody
 * in the batch; the rows may still be in the journal, which is why callers retry with the same
 * reservation id).
 *
 * <p>Reads, deletes and the snapshot store are untouched: a snapshot is a cache that recovery can
 * rebuild from the journal, so losing the latest one costs a longer replay, never money.
 *
 * <p>Every write goes through the ledger's {@link JournalWriter}, which holds the flush, the fence
 * (a write that another ledger's write beat to its sequence number stops this ledger's writes at
 * once) and the stats; this class only adapts it to the plugin.
 *
 * <p>{@code ledger.journal.sync = off} (PostgreSQL, whose commit is the flush) leaves only the
 * fence.
 */
public final class DurableJournalDao implements JournalDao {
  private static final Logger log = LoggerFactory.getLogger(DurableJournalDao.class);

  /** The flush that was used before {@link H2Flush}, kept to measure the two side by side. */
  static final String H2_SYNC = H2Flush.CHECKPOINT_SYNC;

  private final JournalDao journal;
  private final JournalWriter writer;

  /**
   * The constructor pekko-persistence-jdbc calls reflectively (same arguments as {@link
   * DefaultJournalDao}).
   */
  public DurableJournalDao(
      JdbcBackend.JdbcDatabaseDef db,
      JdbcProfile profile,
      JournalConfig journalConfig,
      Serialization serialization,
      ExecutionContext ec,
      Materializer mat) {
    this.journal = new DefaultJournalDao(db, profile, journalConfig, serialization, ec, mat);
    Config config = serialization.system().settings().config();
    this.writer = JournalWriter.of(serialization.system());
    if (JournalDurability.syncRequested(config)) {
      if (!(profile instanceof H2Profile)) {
        throw new IllegalArgumentException(
            "ledger.journal.sync = on flushes the embedded H2 journal; with "
                + profile.getClass().getName()
                + " the database's own commit is what makes a write durable (on"
                + " PostgreSQL synchronous_commit = on): set ledger.journal.sync = off and jdbc-journal.dao back to the"
                + " plugin's default");
      }
      boolean checkpointSync = JournalDurability.checkpointSync(config);
      boolean pipelined = JournalDurability.pipelined(config);
      writer.flushWith(() -> flush(db, checkpointSync), pipelined);
      if (pipelined) {
        log.info(
            "ledger journal: every write is flushed to disk ({}) before the ledger answers for it; the next"
                + " batch is written while one is flushed",
            flushName(config));
      } else {
        log.info(
            "ledger journal: every write is flushed to disk ({}) before it is confirmed",
            flushName(config));
      }
    } else {
      if (profile instanceof H2Profile) {
        log.warn(
            "ledger journal: ledger.journal.sync = off — acknowledged reservations can be lost on power loss");
      } else {
        log.info(
            "ledger journal: each group commit is durable when its transaction commits (synchronous_commit)");
      }
    }
  }

  /**
   * Committed through the ledger's {@link JournalWriter}: fenced, and confirmed once flushed (the
   * write the ledger announced as one nobody waits to see flushed, at its commit).
   */
  @Override
  public Future<Seq<Try<BoxedUnit>>> asyncWriteMessages(Seq<AtomicWrite> messages) {
    long highestSequenceNr = messages.isEmpty() ? -1 : messages.last().highestSequenceNr();
    return FutureConverters.asScala(
        writer.commit(
            () -> FutureConverters.asJava(journal.asyncWriteMessages(messages)),
            highestSequenceNr));
  }

  @Override
  public Future<BoxedUnit> delete(String persistenceId, long toSequenceNr) {
    return journal.delete(persistenceId, toSequenceNr);
  }

  @Override
  public Future<Object> highestSequenceNr(String persistenceId, long fromSequenceNr) {
    return journal.highestSequenceNr(persistenceId, fromSequenceNr);
  }

  @Override
  public Source<Try<Tuple2<PersistentRepr, Object>>, NotUsed> messages(
      String persistenceId, long fromSequenceNr, long toSequenceNr, long max) {
    return journal.messages(persistenceId, fromSequenceNr, toSequenceNr, max);
  }

  @Override
  public Source<Try<Tuple2<PersistentRepr, Object>>, NotUsed> messagesWithBatch(
      String persistenceId,
      long fromSequenceNr,
      long toSequenceNr,
      int batchSize,
      Option<Tuple2<FiniteDuration, Scheduler>> refreshInterval) {
    return journal.messagesWithBatch(
        persistenceId, fromSequenceNr, toSequenceNr, batchSize, refreshInterval);
  }

  private static String flushName(Config config) {
    return JournalDurability.checkpointSync(config) ? H2_SYNC : "store and force";
  }

  /**
   * Makes everything committed so far durable ({@link H2Flush}, or {@code CHECKPOINT SYNC} when
   * {@code checkpointSync}), on a pooled connection of the journal's own database, on Slick's
   * threads.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static CompletionStage<?> flush(JdbcBackend.JdbcDatabaseDef db, boolean checkpointSync) {
    SimpleJdbcAction<BoxedUnit> sync =
        SimpleJdbcAction.apply(
            context -> {
              try {
                if (checkpointSync) {
                  try (Statement statement = context.connection().createStatement()) {
                    statement.execute(H2_SYNC);
                  }
                } else {
                  H2Flush.storeAndForce(context.connection());
                }
              } catch (java.sql.SQLException e) {
                throw new IllegalStateException("journal sync failed", e);
              }
              return BoxedUnit.UNIT;
            });
    // Slick's Scala signature accepts any effect type; Java cannot express that bound, hence the
    // raw call.
    Future<BoxedUnit> done = (Future<BoxedUnit>) db.run((DBIOAction) sync);
    return FutureConverters.asJava(done);
  }
}
