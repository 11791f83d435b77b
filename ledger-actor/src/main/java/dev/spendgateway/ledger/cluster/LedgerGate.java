package dev.spendgateway.ledger.cluster;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerProtocol;
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
 * Whether this node can reach the cluster's one ledger, and whether it runs here: two flags that
 * this node's {@link NodeBatcher} reads at every command (closed: a reserve, settle or void is
 * answered "busy, retry after N s" at once instead of waiting out its ask in the proxy's buffer)
 * and {@code /readyz} reads too.
 *
 * <p>Whether the ledger is in reach is known two ways: a probe ({@code AwaitReady}, which the
 * ledger answers only once it has recovered) every {@code gateway.cluster.ledger-probe-interval},
 * and the cluster's own news: the moment the oldest node (where the singleton runs) becomes
 * unreachable, leaves or is downed, the gate closes and the batcher answers what it still holds
 * busy; the next answered probe opens it again. Where the ledger runs is the oldest node, from the
 * same news.
 */
final class LedgerGate extends AbstractBehavior<Object> {

  /** The gate's timing ({@code gateway.cluster.*}). */
  public record Timing(Duration probeInterval, Duration probeTimeout, int retryAfterSeconds) {}

  private record Probe() {}

  private record ProbeAnswered(long probe, boolean ok) {}

  private final ActorRef<GlobalBudget.Command> proxy;
  private final ActorRef<Object> nodeBatcher;
  private final Address selfAddress;
  private final Timing timing;
  private final AtomicBoolean reachable;
  private final AtomicBoolean here;

  /** Probes sent so far (the number of the latest). */
  private long probes;

  /** The number of the probe whose answer set {@code reachable} last. */
  private long decided;

  /** Whether the latest probe is still waiting for its answer. */
  private boolean probing;

  private Optional<Address> oldest = Optional.empty();

  /**
   * @param nodeBatcher told when the ledger goes out of reach
   * @param reachable set by the gate, read by the batcher and {@code /readyz}; starts false (not
   *     yet recovered)
   * @param here set by the gate: whether this node is the oldest, where the singleton runs
   */
  static Behavior<Object> create(
      ActorRef<GlobalBudget.Command> proxy,
      Timing timing,
      ActorRef<Object> nodeBatcher,
      AtomicBoolean reachable,
      AtomicBoolean here) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(new Probe(), timing.probeInterval());
                  Cluster.get(context.getSystem())
                      .subscriptions()
                      .tell(
                          Subscribe.create(
                              context.getSelf().narrow(), ClusterEvent.ClusterDomainEvent.class));
                  return new LedgerGate(context, proxy, timing, nodeBatcher, reachable, here);
                }));
  }

  private LedgerGate(
      ActorContext<Object> context,
      ActorRef<GlobalBudget.Command> proxy,
      Timing timing,
      ActorRef<Object> nodeBatcher,
      AtomicBoolean reachable,
      AtomicBoolean here) {
    super(context);
    this.proxy = proxy;
    this.nodeBatcher = nodeBatcher;
    this.selfAddress = Cluster.get(context.getSystem()).selfMember().address();
    this.timing = timing;
    this.reachable = reachable;
    this.here = here;
    context.getSelf().tell(new Probe());
  }

  @Override
  public Receive<Object> createReceive() {
    return newReceiveBuilder()
        .onMessage(Probe.class, this::onProbe)
        .onMessage(ProbeAnswered.class, this::onProbeAnswered)
        .onMessage(ClusterEvent.CurrentClusterState.class, this::onClusterState)
        .onMessage(ClusterEvent.ClusterDomainEvent.class, this::onClusterEvent)
        .build();
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
    setOldest(oldestOf(state.getMembers()));
    return this;
  }

  private void setOldest(Optional<Address> oldest) {
    this.oldest = oldest;
    here.set(oldest.isPresent() && oldest.get().equals(selfAddress));
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
      setOldest(oldestOf(Cluster.get(getContext().getSystem()).state().getMembers()));
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
