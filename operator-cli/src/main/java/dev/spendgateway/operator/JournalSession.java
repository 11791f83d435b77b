package dev.spendgateway.operator;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.audit.JournalReader;
import dev.spendgateway.ledger.audit.LedgerAudit;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** An actor system for reading (or importing into) the journal, shut down when closed. */
final class JournalSession implements AutoCloseable {
  final ActorSystem<Void> system;
  final Config config;
  final JournalReader reader;

  JournalSession(JournalOptions options) {
    this(options, true);
  }

  /**
   * @param requireJournal whether the H2 journal must exist already ({@link JournalOptions})
   */
  JournalSession(JournalOptions options, boolean requireJournal) {
    this.config = options.load(requireJournal);
    this.system = ActorSystem.create(Behaviors.empty(), "gateway-admin", config);
    this.reader = new JournalReader(system);
  }

  /** An audit against the configured caps. */
  LedgerAudit newAudit() {
    return new LedgerAudit(LedgerSettings.fromConfig(config).caps());
  }

  /** Waits for {@code stage}: a long journal takes as long as it takes (tail never ends). */
  <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(7, TimeUnit.DAYS);
  }

  @Override
  public void close() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
