package dev.spendgateway.ledger.cluster;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerAccess;
import dev.spendgateway.ledger.LedgerProtocol;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.SingletonActor;

/**
 * The ledger on a cluster node: the whole ledger — the batching front ({@code ReservationBatcher})
 * with its {@link GlobalBudget} — runs as one Cluster Singleton on the oldest node, so commands
 * from every node share one group commit, and every node reaches it through a singleton proxy
 * behind its own {@link NodeBatcher}, which a {@link LedgerGate} tells whether the ledger is in
 * reach and where. Every command and reply crossing nodes is a {@code LedgerSerializable} record,
 * serialized by Jackson (CBOR); Java serialization stays off.
 */
public final class ClusterLedger {
  /** The singleton's name, the same on every node. */
  public static final String SINGLETON_NAME = "ledger";

  /** How often a node looks whether the ledger answers yet, to rehearse its recovery then. */
  private static final Duration REHEARSAL_POLL = Duration.ofMillis(500);

  /** The warm standby's settings (conf/cluster.conf). */
  static final String STANDBY_KEY = "gateway.cluster.standby";

  private ClusterLedger() {}

  /**
   * Registers the singleton (started here only while this node is the oldest) and this node's gate.
   */
  public static LedgerAccess start(ActorSystem<?> system, Behavior<GlobalBudget.Command> ledger) {
    Config config = system.settings().config();
    // A crash of the front restarts it (a new GlobalBudget recovers from the journal); a failed
    // start
    // (schema, a non-durable database) stops it, and /readyz stays 503 on every node.
    // Each start of the ledger here (the first, a take-over, a restart) may take this node's
    // standby state for its recovery; only the first that finds a caught-up standby gets it.
    LedgerStandby standby = LedgerStandby.get(Adapter.toClassic(system));
    Behavior<GlobalBudget.Command> startingHere =
        Behaviors.setup(
            context -> {
              standby.ledgerStartsHere();
              return ledger;
            });
    Behavior<GlobalBudget.Command> supervised =
        Behaviors.supervise(startingHere).onFailure(SupervisorStrategy.restart());
    ActorRef<GlobalBudget.Command> proxy =
        ClusterSingleton.get(system)
            .init(
                SingletonActor.of(supervised, SINGLETON_NAME)
                    .withStopMessage(new LedgerProtocol.HandOver()));
    LedgerGate.Timing timing =
        new LedgerGate.Timing(
            config.getDuration("gateway.cluster.ledger-probe-interval"),
            config.getDuration("gateway.cluster.ledger-probe-timeout"),
            config.getInt("gateway.cluster.retry-after-seconds"));
    Config batching = config.getConfig("gateway.cluster.node-batch");
    NodeBatcher.Settings nodeBatch =
        new NodeBatcher.Settings(
            batching.getInt("max-commands"),
            batching.getInt("max-in-flight"),
            batching.getDuration("answer-timeout"),
            timing.retryAfterSeconds());
    warmUp(system);
    AtomicBoolean reachable = new AtomicBoolean(false);
    AtomicBoolean here = new AtomicBoolean(false);
    ActorRef<Object> door =
        system.systemActorOf(
            NodeBatcher.create(
                proxy, nodeBatch, new NodeBatcher.Whereabouts(reachable::get, here::get)),
            "ledger-door",
            Props.empty());
    system.systemActorOf(
        LedgerGate.create(proxy, timing, door, reachable, here), "ledger-gate", Props.empty());
    rehearseRecoveryOnceReachable(system, reachable);
    return new LedgerAccess(door.narrow(), reachable::get);
  }

  /**
   * Runs {@link RecoveryRehearsal} once the ledger first answers (not before: on a new journal the
   * ledger's node creates the tables first). Checked by polling the gate's flag, which needs no
   * message protocol and stops by itself with the actor system.
   */
  private static void rehearseRecoveryOnceReachable(
      ActorSystem<?> system, AtomicBoolean reachable) {
    try {
      system
          .scheduler()
          .scheduleOnce(
              REHEARSAL_POLL,
              () -> {
                if (!reachable.get()) {
                  rehearseRecoveryOnceReachable(system, reachable);
                  return;
                }
                system.systemActorOf(
                    RecoveryRehearsal.create(
                        line -> {
                          system.log().info(line);
                          startStandby(system);
                        }),
                    "ledger-recovery-rehearsal",
                    Props.empty());
              },
              system.executionContext());
    } catch (IllegalStateException shuttingDown) {
      // The scheduler refuses new tasks once the system stops: nothing left to warm.
    }
  }

  /**
   * After the rehearsal (never at the same time: the rehearsal reads the snapshot store too),
   * unless {@code gateway.cluster.standby.enabled} is off or the ledger runs here.
   */
  private static void startStandby(ActorSystem<?> system) {
    Config config = system.settings().config();
    if (config.hasPath(STANDBY_KEY + ".enabled") && !config.getBoolean(STANDBY_KEY + ".enabled")) {
      return;
    }
    Duration pause =
        config.hasPath(STANDBY_KEY + ".restart-pause")
            ? config.getDuration(STANDBY_KEY + ".restart-pause")
            : Duration.ofSeconds(5);
    LedgerStandby.get(Adapter.toClassic(system)).start(pause);
  }

  /**
   * Every node opens its journal connection pool and checks the journal once at start, although
   * only one node holds the ledger: a node that takes the ledger over then recovers at once instead
   * of first creating the pool (seconds on a busy machine, all of them a hand-over's 503s), and a
   * node that cannot reach the journal says so in its log before it is ever needed.
   */
  private static void warmUp(ActorSystem<?> system) {
    dev.spendgateway.ledger.journal.PostgresJournal.requireDurableCommit(system)
        .whenComplete(
            (ok, failure) -> {
              if (failure != null) {
                system
                    .log()
                    .warn("ledger journal not usable from this node (yet): {}", failure.toString());
              }
            });
  }
}
