package dev.spendgateway.ledger.cluster;

import dev.spendgateway.ledger.Decider;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * This node's door to the cluster's one ledger: every command goes on to the singleton proxy,
 * except while the ledger is known to be out of reach (moving to another node, recovering there, or
 * its node lost): then a reserve, settle or void is answered at once "busy, retry after N s" (the
 * edge's 503 with {@code retry-after}) instead of waiting out its ask in the proxy's buffer.
 * Nothing is decided for such a command, so no provider is ever called without a durable
 * reservation.
 *
 * <p>Whether the ledger is in reach is known two ways: a probe ({@code AwaitReady}, which the
 * ledger answers only once it has recovered) every {@code gateway.cluster.ledger-probe-interval},
 * and the cluster's own news: the moment the oldest node (where the singleton runs) becomes
 * unreachable, leaves or is downed, the gate closes; the next answered probe opens it again. {@code
 * /readyz} reads the same flag.
 */
public final class LedgerGate extends AbstractBehavior<Object> {

  /** The gate's timing ({@code gateway.cluster.*}). */
  public record Timing(Duration probeInterval, Duration probeTimeout, int retryAfterSeconds) {}

  private record Probe() {}

  private record ProbeAnswered(long probe, boolean ok) {}

  private final ActorRef<GlobalBudget.Command> proxy;
  private final ActorRef<Object> nodeBatcher;
  private final Address selfAddress;
  private final Timing timing;
  private final AtomicBoolean reachable;

  /** Probes sent so far (the number of the latest). */
  private long probes;

  /** The number of the probe whose answer set {@code reachable} last. */
  private long decided;

  /** Whether the latest probe is still waiting for its answer. */
  private boolean probing;

  private Optional<Address> oldest = Optional.empty();

  /**
   * @param reachable set by the gate, read by {@code /readyz}; starts false (not yet recovered)
   */
  public static Behavior<GlobalBudget.Command> create(
      ActorRef<GlobalBudget.Command> proxy,
      Timing timing,
      NodeBatcher.Settings batching,
      AtomicBoolean reachable) {
    Behavior<Object> gate =
        Behaviors.setup(
            context ->
                Behaviors.withTimers(
                    timers -> {
                      timers.startTimerWithFixedDelay(new Probe(), timing.probeInterval());
                      Cluster.get(context.getSystem())
                          .subscriptions()
                          .tell(
                              Subscribe.create(
                                  context.getSelf().narrow(),
                                  ClusterEvent.ClusterDomainEvent.class));
                      return new LedgerGate(context, proxy, timing, batching, reachable);
                    }));
    return gate.narrow();
  }

  private LedgerGate(
      ActorContext<Object> context,
      ActorRef<GlobalBudget.Command> proxy,
      Timing timing,
      NodeBatcher.Settings batching,
      AtomicBoolean reachable) {
    super(context);
    this.proxy = proxy;
    this.nodeBatcher = context.spawn(NodeBatcher.create(proxy, batching), "node-batcher");
    this.selfAddress = Cluster.get(context.getSystem()).selfMember().address();
    this.timing = timing;
    this.reachable = reachable;
    context.getSelf().tell(new Probe());
  }

  @Override
  public Receive<Object> createReceive() {
    return newReceiveBuilder()
        .onMessage(Batchable.class, this::onWrite)
        .onMessage(GlobalBudget.Command.class, this::onOther)
        .onMessage(Probe.class, this::onProbe)
        .onMessage(ProbeAnswered.class, this::onProbeAnswered)
        .onMessage(ClusterEvent.CurrentClusterState.class, this::onClusterState)
        .onMessage(ClusterEvent.ClusterDomainEvent.class, this::onClusterEvent)
        .build();
  }

  /**
   * The ledger on this node gets each command as it comes (no network to save); a ledger on another
   * node gets them in batches. Where the ledger is only decides the cost: both ways reach it
   * through the proxy wherever it is.
   */
  private Behavior<Object> onWrite(Batchable command) {
    if (reachable.get()) {
      if (oldest.isPresent() && oldest.get().equals(selfAddress)) {
        proxy.tell(command);
      } else {
        nodeBatcher.tell(command);
      }
    } else {
      GlobalBudget.send(
          command, new LedgerProtocol.Busy(Decider.busy(command).id(), timing.retryAfterSeconds()));
    }
    return this;
  }

  /** Queries and operator commands wait in the proxy's buffer (their asks may time out: 503). */
  private Behavior<Object> onOther(GlobalBudget.Command command) {
    proxy.tell(command);
    return this;
  }

  /**
   * While the ledger answers, one probe at a time: a slow answer is not a failure until it times
   * out. While it does not, a new probe every interval even if earlier ones are still waiting: the
   * earlier ones may have gone to the lost node (the proxy forwards to the old place until it hears
   * the node was removed), so a probe that can reach the new ledger leaves within one interval of
   * it starting, and the ledger answers a waiting probe the moment its recovery ends. At most
   * timeout / interval probes wait at once.
   */
  private Behavior<Object> onProbe(Probe probe) {
    if (probing && reachable.get()) {
      return this;
    }
    probing = true;
    long number = ++probes;
    getContext()
        .ask(
            LedgerProtocol.Ready.class,
            proxy,
            timing.probeTimeout(),
            LedgerProtocol.AwaitReady::new,
            (ready, failure) -> new ProbeAnswered(number, failure == null));
    return this;
  }

  /**
   * The newest answer decides: an answer older than one already applied is dropped (a timeout of a
   * probe that went to the lost node must not close a gate a later probe opened).
   */
  private Behavior<Object> onProbeAnswered(ProbeAnswered answered) {
    if (answered.probe() <= decided) {
      return this;
    }
    decided = answered.probe();
    if (answered.probe() == probes) {
      probing = false;
    }
    boolean was = reachable.getAndSet(answered.ok());
    if (was && !answered.ok()) {
      nodeBatcher.tell(new NodeBatcher.LedgerOutOfReach());
    }
    if (was != answered.ok()) {
      getContext()
          .getLog()
          .info(
              answered.ok()
                  ? "ledger reachable: calls go through"
                  : "ledger not answering: calls get 503 with retry-after until it does");
    }
    return this;
  }

  private Behavior<Object> onClusterState(ClusterEvent.CurrentClusterState state) {
    oldest = oldestOf(state.getMembers());
    return this;
  }

  /**
   * The oldest node holds the singleton: its loss or departure means the ledger is about to move.
   */
  private Behavior<Object> onClusterEvent(ClusterEvent.ClusterDomainEvent event) {
    Optional<Address> affected = Optional.empty();
    if (event instanceof ClusterEvent.UnreachableMember u) {
      affected = Optional.of(u.member().address());
    } else if (event instanceof ClusterEvent.MemberLeft m) {
      affected = Optional.of(m.member().address());
    } else if (event instanceof ClusterEvent.MemberExited m) {
      affected = Optional.of(m.member().address());
    } else if (event instanceof ClusterEvent.MemberDowned m) {
      affected = Optional.of(m.member().address());
    } else if (event instanceof ClusterEvent.MemberRemoved m) {
      affected = Optional.of(m.member().address());
    }
    if (affected.isPresent() && affected.equals(oldest) && reachable.getAndSet(false)) {
      // An answer to a probe sent before this news says nothing about the ledger now.
      decided = probes;
      nodeBatcher.tell(new NodeBatcher.LedgerOutOfReach());
      getContext()
          .getLog()
          .warn(
              "the ledger's node {} is {}: calls get 503 with retry-after until the ledger answers"
                  + " again",
              affected.get(),
              event.getClass().getSimpleName());
    }
    if (event instanceof ClusterEvent.MemberEvent) {
      oldest = oldestOf(Cluster.get(getContext().getSystem()).state().getMembers());
    }
    return this;
  }

  private static Optional<Address> oldestOf(Iterable<Member> members) {
    Member oldest = null;
    for (Member m : members) {
      if ((m.status() == MemberStatus.up() || m.status() == MemberStatus.leaving())
          && (oldest == null || m.isOlderThan(oldest))) {
        oldest = m;
      }
    }
    return Optional.ofNullable(oldest).map(Member::address);
  }
}
