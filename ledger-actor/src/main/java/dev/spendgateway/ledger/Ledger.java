package dev.spendgateway.ledger;

import dev.spendgateway.ledger.journal.JournalDurability;
import dev.spendgateway.ledger.journal.JournalSchema;
import dev.spendgateway.ledger.journal.PostgresJournal;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.ActorContext;

/**
 * Starts the ledger. The returned ref is all the edge needs (wrap it in a {@link LedgerClient}); a
 * cluster singleton proxy can replace it later without the edge noticing.
 *
 * <p>Before {@link GlobalBudget} recovers, {@link JournalSchema#createIfNotExists} creates the
 * journal's tables for the configured database if any is missing (existing ones are left alone, so
 * it is safe on every start). {@link LedgerClient#awaitReady()} completes once that and the
 * recovery from the journal are done.
 *
 * <p>The ledger answers a command only once its event is durable. With {@code ledger.journal.sync}
 * on (the shipped default) that means flushed to disk, not just handed to the OS: the journal's DAO
 * ({@link JournalDurability#DAO}) syncs each group commit before confirming it. A config that asks
 * for the flush but wires another DAO is refused here rather than silently losing it.
 */
public final class Ledger {
  public static final String ACTOR_NAME = "ledger";

  private Ledger() {}

  /**
   * Starts the ledger the way {@code system}'s configuration asks: on a cluster node as the
   * cluster's singleton, reached through a proxy behind this node's {@link
   * dev.spendgateway.ledger.cluster.LedgerGate}; otherwise as a local actor (always reachable).
   */
  public static LedgerAccess start(
      ActorSystem<?> system, LedgerSettings settings, Clock clock, LedgerObserver observer) {
    if (dev.spendgateway.ledger.cluster.ClusterMode.isClusterNode(system.settings().config())) {
      return dev.spendgateway.ledger.cluster.ClusterLedger.start(
          system, behavior(system, settings, clock, observer));
    }
    return new LedgerAccess(spawn(system, settings, clock, observer), () -> true);
  }

  /** Spawns the ledger as a top-level actor of {@code system}. */
  public static ActorRef<GlobalBudget.Command> spawn(
      ActorSystem<?> system, LedgerSettings settings, Clock clock) {
    return spawn(system, settings, clock, LedgerObserver.NONE);
  }

  /**
   * As above; {@code observer} (metrics) is told about every durable journal write and the
   * recovery.
   */
  public static ActorRef<GlobalBudget.Command> spawn(
      ActorSystem<?> system, LedgerSettings settings, Clock clock, LedgerObserver observer) {
    return system.systemActorOf(
        behavior(system, settings, clock, observer), ACTOR_NAME, Props.empty());
  }

  /** Spawns the ledger as a child of {@code context} (e.g. the guardian of the main app). */
  public static ActorRef<GlobalBudget.Command> spawn(
      ActorContext<?> context, LedgerSettings settings, Clock clock) {
    return context.spawn(
        behavior(context.getSystem(), settings, clock, LedgerObserver.NONE), ACTOR_NAME);
  }

  private static org.apache.pekko.actor.typed.Behavior<GlobalBudget.Command> behavior(
      ActorSystem<?> system, LedgerSettings settings, Clock clock, LedgerObserver observer) {
    JournalDurability.requireConsistent(system.settings().config());
    return ReservationBatcher.create(
        settings, clock, () -> beforeRecovery(system, settings), observer);
  }

  /**
   * The journal's schema (when {@code ledger.create-schema} is on), then the check that a commit on
   * it is durable (PostgreSQL's {@code synchronous_commit} and {@code fsync}; nothing to check on
   * H2).
   */
  static CompletionStage<Done> beforeRecovery(ActorSystem<?> system, LedgerSettings settings) {
    CompletionStage<Done> schema =
        settings.createSchema()
            ? JournalSchema.createIfNotExists(system)
            : CompletableFuture.completedFuture(Done.getInstance());
    return schema.thenCompose(done -> PostgresJournal.requireDurableCommit(system));
  }
}
