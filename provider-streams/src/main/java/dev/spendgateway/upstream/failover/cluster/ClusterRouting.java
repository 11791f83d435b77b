package dev.spendgateway.upstream.failover.cluster;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The routing state of a cluster node made the cluster's, with Pekko Distributed Data: this node's
 * model circuit openings and resets, breaker openings and closings and conversation switches go to
 * the replicated maps ({@link RoutingReplica} says which), the maps' changes come back and are
 * applied here, and the membership sets this node's share of the rate limits. One actor per node,
 * started only on a cluster node; a single process never starts it and keeps its state in memory.
 *
 * <p>How fast: a circuit or breaker opening is written to every reachable node at once ({@code
 * WriteAll}), a new switch too, a conversation's later calls locally (gossip spreads them); each
 * node applies what arrived within Distributed Data's {@code notify-subscribers-interval}. Every
 * map's entries expire: the node first in address order sweeps the expired ones every {@code
 * sweep-interval}, and every node drops its own expired conversation entries then.
 */
public final class ClusterRouting
    implements ModelCircuits.Sharing, ProviderBreakers.Sharing, ConversationStickiness.Sharing {
  private static final Logger log = LoggerFactory.getLogger(ClusterRouting.class);

  static final Key<LWWMap<String, Long>> CIRCUITS = LWWMapKey.create("gateway-model-circuits");
  static final Key<LWWMap<String, String>> BREAKERS = LWWMapKey.create("gateway-provider-breakers");
  static final Key<LWWMap<String, String>> SWITCHES =
      LWWMapKey.create("gateway-conversation-switches");

  /** {@code gateway.cluster.routing}. */
  public record Settings(Duration writeTimeout, Duration sweepInterval) {
    public static Settings fromConfig(com.typesafe.config.Config config) {
      com.typesafe.config.Config c = config.getConfig("gateway.cluster.routing");
      return new Settings(c.getDuration("write-timeout"), c.getDuration("sweep-interval"));
    }
  }

  /** This node's routing state, handed over once it is built. */
  public record Targets(
      ModelCircuits circuits,
      ProviderBreakers breakers,
      ConversationStickiness stickiness,
      ProviderRateLimits rateLimits) {}

  sealed interface Command {}

  private record Attach(Targets targets) implements Command {}

  private record ModelOpened(String model) implements Command {}

  private record ModelReset(String model) implements Command {}

  private record BreakerOpened(Provider provider, Duration resetTimeout) implements Command {}

  private record BreakerClosed(Provider provider) implements Command {}

  private record ConversationSeen(String conversationId, Provider provider) implements Command {}

  private record CircuitsChanged(Map<String, Long> entries) implements Command {}

  private record BreakersChanged(Map<String, String> entries) implements Command {}

  private record SwitchesChanged(Map<String, String> entries) implements Command {}

  private record MembersChanged(ClusterEvent.MemberEvent event) implements Command {}

  private enum Sweep implements Command {
    TICK
  }

  /** A read of the cluster's state at start answered (or gave up). */
  private record Read(String what, Optional<Command> changed) implements Command {}

  /** An update's answer: nothing to do (a write that timed out is still local and gossips on). */
  private record Written(String what, boolean ok) implements Command {}

  private final ActorRef<Command> actor;
  private final CompletableFuture<Done> caughtUp;

  private ClusterRouting(ActorRef<Command> actor, CompletableFuture<Done> caughtUp) {
    this.actor = actor;
    this.caughtUp = caughtUp;
  }

  /**
   * Completes once this node, up in the cluster, has read the routing state from a majority of the
   * nodes (or those reads gave up after {@code write-timeout}; gossip then brings it a little
   * later): a restarted node is not ready before it knows the cluster's circuits and switches.
   */
  public CompletionStage<Done> caughtUp() {
    return caughtUp;
  }

  /** Starts the node's routing replica; {@link #attach} hands it the state once built. */
  public static ClusterRouting start(ActorSystem<?> system, Settings settings, Clock clock) {
    CompletableFuture<Done> caughtUp = new CompletableFuture<>();
    ActorRef<Command> ref =
        system.systemActorOf(
            Behaviors.<Command>withStash(
                10_000,
                stash ->
                    Behaviors.receive(Command.class)
                        .onMessage(
                            Attach.class,
                            a -> stash.unstashAll(running(a.targets(), settings, clock, caughtUp)))
                        .onAnyMessage(
                            m -> {
                              stash.stash(m);
                              return Behaviors.same();
                            })
                        .build()),
            "cluster-routing",
            Props.empty());
    return new ClusterRouting(ref, caughtUp);
  }

  /** The node's circuits, breakers, switches and rate limits: replication starts now. */
  public void attach(Targets targets) {
    actor.tell(new Attach(targets));
  }

  @Override
  public void opened(String model) {
    actor.tell(new ModelOpened(model));
  }

  @Override
  public void reset(String model) {
    actor.tell(new ModelReset(model));
  }

  @Override
  public void opened(Provider provider, Duration resetTimeout) {
    actor.tell(new BreakerOpened(provider, resetTimeout));
  }

  @Override
  public void closed(Provider provider) {
    actor.tell(new BreakerClosed(provider));
  }

  @Override
  public void seen(String conversationId, Provider provider) {
    actor.tell(new ConversationSeen(conversationId, provider));
  }

  private static Behavior<Command> running(
      Targets targets, Settings settings, Clock clock, CompletableFuture<Done> caughtUp) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers ->
                    DistributedData.<Command, LWWMap<String, Long>>withReplicatorMessageAdapter(
                        longs ->
                            DistributedData
                                .<Command, LWWMap<String, String>>withReplicatorMessageAdapter(
                                    texts ->
                                        new Running(
                                                context, timers, longs, texts, targets, settings,
                                                clock, caughtUp)
                                            .behavior()))));
  }

  /** The running replica: one handler per command. */
  private static final class Running {
    private final ActorContext<Command> context;
    private final ReplicatorMessageAdapter<Command, LWWMap<String, Long>> longs;
    private final ReplicatorMessageAdapter<Command, LWWMap<String, String>> texts;
    private final Targets targets;
    private final Settings settings;
    private final Clock clock;
    private final SelfUniqueAddress node;
    private final RoutingReplica replica;
    private final Map<String, Member> members = new HashMap<>();
    private final CompletableFuture<Done> caughtUp;
    private int readsLeft = -1; // -1: not started (this node is not up yet)

    private Map<String, Long> circuits = Map.of();
    private Map<String, String> breakers = Map.of();
    private Map<String, String> switches = Map.of();

    Running(
        ActorContext<Command> context,
        TimerScheduler<Command> timers,
        ReplicatorMessageAdapter<Command, LWWMap<String, Long>> longs,
        ReplicatorMessageAdapter<Command, LWWMap<String, String>> texts,
        Targets targets,
        Settings settings,
        Clock clock,
        CompletableFuture<Done> caughtUp) {
      this.context = context;
      this.caughtUp = caughtUp;
      this.longs = longs;
      this.texts = texts;
      this.targets = targets;
      this.settings = settings;
      this.clock = clock;
      this.node = DistributedData.get(context.getSystem()).selfUniqueAddress();
      this.replica =
          new RoutingReplica(
              targets.circuits(),
              targets.breakers(),
              targets.stickiness(),
              targets.rateLimits(),
              clock,
              address(Cluster.get(context.getSystem()).selfMember()));
      // A subscription's answers come through one message adapter per actor (the last one
      // registered serves every key), so one function maps the three maps' changes.
      longs.subscribe(CIRCUITS, Running::changed);
      texts.subscribe(BREAKERS, Running::changed);
      texts.subscribe(SWITCHES, Running::changed);
      Cluster.get(context.getSystem())
          .subscriptions()
          .tell(
              Subscribe.create(
                  context.messageAdapter(ClusterEvent.MemberEvent.class, MembersChanged::new),
                  ClusterEvent.MemberEvent.class));
      timers.startTimerWithFixedDelay(Sweep.TICK, settings.sweepInterval());
    }

    Behavior<Command> behavior() {
      return Behaviors.receive(Command.class)
          .onMessage(ModelOpened.class, this::onModelOpened)
          .onMessage(ModelReset.class, this::onModelReset)
          .onMessage(BreakerOpened.class, this::onBreakerOpened)
          .onMessage(BreakerClosed.class, this::onBreakerClosed)
          .onMessage(ConversationSeen.class, this::onConversationSeen)
          .onMessage(CircuitsChanged.class, this::onCircuitsChanged)
          .onMessage(BreakersChanged.class, this::onBreakersChanged)
          .onMessage(SwitchesChanged.class, this::onSwitchesChanged)
          .onMessage(MembersChanged.class, this::onMembersChanged)
          .onMessageEquals(Sweep.TICK, this::onSweep)
          .onMessage(Written.class, this::onWritten)
          .onMessage(Read.class, this::onRead)
          .onMessage(Attach.class, a -> Behaviors.same())
          .build();
    }

    private Behavior<Command> onModelOpened(ModelOpened m) {
      long now = clock.millis();
      updateLongs(
          CIRCUITS,
          everyNode(),
          "model circuit " + m.model(),
          map -> map.put(node, m.model(), now));
      return Behaviors.same();
    }

    private Behavior<Command> onModelReset(ModelReset m) {
      updateLongs(
          CIRCUITS,
          everyNode(),
          "model circuit reset " + m.model(),
          map -> map.remove(node, m.model()));
      return Behaviors.same();
    }

    private Behavior<Command> onBreakerOpened(BreakerOpened m) {
      long until = clock.millis() + m.resetTimeout().toMillis();
      String value = RoutingReplica.breakerValue(until, address(selfMember()));
      updateTexts(
          BREAKERS,
          everyNode(),
          "breaker " + m.provider().wireName(),
          map -> map.put(node, m.provider().wireName(), value));
      return Behaviors.same();
    }

    private Behavior<Command> onBreakerClosed(BreakerClosed m) {
      String key = m.provider().wireName();
      // Only this node's own opening is withdrawn: another node's may still hold.
      String self = address(selfMember());
      String current = breakers.get(key);
      if (current != null && current.endsWith(" " + self)) {
        updateTexts(BREAKERS, everyNode(), "breaker closed " + key, map -> map.remove(node, key));
      }
      return Behaviors.same();
    }

    private Behavior<Command> onConversationSeen(ConversationSeen m) {
      String value = RoutingReplica.switchValue(m.provider(), clock.millis());
      // A new switch goes to every reachable node at once, so it outlives this node and the
      // conversation's next call finds it on whichever node it lands (a majority write could skip
      // that node, which would then learn it only by gossip, seconds later, and send the call back
      // to the primary). Switches are rare; a later call only refreshes the time, locally.
      Replicator.WriteConsistency consistency =
          switches.containsKey(m.conversationId()) ? Replicator.writeLocal() : everyNode();
      updateTexts(
          SWITCHES,
          consistency,
          "conversation switch",
          map -> map.put(node, m.conversationId(), value));
      return Behaviors.same();
    }

    private Behavior<Command> onCircuitsChanged(CircuitsChanged m) {
      for (String model : m.entries().keySet()) {
        if (!circuits.containsKey(model)) {
          log.info("model '{}' retired: its circuit is open on every node", model);
        }
      }
      circuits = m.entries();
      replica.applyCircuits(circuits);
      return Behaviors.same();
    }

    private Behavior<Command> onBreakersChanged(BreakersChanged m) {
      breakers = m.entries();
      replica.applyBreakers(breakers);
      return Behaviors.same();
    }

    private Behavior<Command> onSwitchesChanged(SwitchesChanged m) {
      switches = m.entries();
      replica.applySwitches(switches);
      return Behaviors.same();
    }

    private Behavior<Command> onMembersChanged(MembersChanged m) {
      Member member = m.event().member();
      if (member.status() == MemberStatus.down() || member.status() == MemberStatus.removed()) {
        members.remove(address(member));
      } else {
        members.put(address(member), member);
      }
      if (readsLeft < 0
          && member.uniqueAddress().equals(selfMember().uniqueAddress())
          && (member.status() == MemberStatus.up() || member.status() == MemberStatus.weaklyUp())) {
        readTheClustersState();
      }
      int before = targets.rateLimits().sharedAmong();
      replica.applyMembers(live());
      int after = targets.rateLimits().sharedAmong();
      if (before != after) {
        log.info(
            "provider rate limits now shared by {} nodes: {}",
            after,
            targets.rateLimits().describe());
      }
      return Behaviors.same();
    }

    /**
     * Every node drops its expired conversation entries; the first node in address order also
     * removes the expired entries from the replicated maps (one sweeper is enough, and no two nodes
     * remove the same entries).
     */
    private Behavior<Command> onSweep() {
      targets.stickiness().pruneExpired();
      if (!replica.sweeps(live())) {
        return Behaviors.same();
      }
      long now = clock.millis();
      Set<String> models =
          RoutingReplica.expiredCircuits(circuits, targets.circuits().openFor(), now);
      if (!models.isEmpty()) {
        updateLongs(CIRCUITS, Replicator.writeLocal(), "sweep", map -> removeAll(map, models));
      }
      Set<String> providers = RoutingReplica.expiredBreakers(breakers, now);
      if (!providers.isEmpty()) {
        updateTexts(BREAKERS, Replicator.writeLocal(), "sweep", map -> removeAll(map, providers));
      }
      Set<String> ids = RoutingReplica.expiredSwitches(switches, targets.stickiness().ttl(), now);
      if (!ids.isEmpty()) {
        updateTexts(SWITCHES, Replicator.writeLocal(), "sweep", map -> removeAll(map, ids));
        log.debug("swept {} expired conversation switches", ids.size());
      }
      return Behaviors.same();
    }

    private <V> LWWMap<String, V> removeAll(LWWMap<String, V> map, Set<String> keys) {
      LWWMap<String, V> out = map;
      for (String key : keys) {
        out = out.remove(node, key);
      }
      return out;
    }

    /**
     * Reads every map from a majority of the nodes once this node is up: a node that restarted
     * applies the cluster's circuits, breakers and switches before it is ready, instead of up to a
     * gossip round later.
     */
    private void readTheClustersState() {
      readsLeft = 3;
      Replicator.ReadConsistency majority = new Replicator.ReadMajority(settings.writeTimeout());
      longs.askGet(replyTo -> new Replicator.Get<>(CIRCUITS, majority, replyTo), Running::read);
      texts.askGet(replyTo -> new Replicator.Get<>(BREAKERS, majority, replyTo), Running::read);
      texts.askGet(replyTo -> new Replicator.Get<>(SWITCHES, majority, replyTo), Running::read);
    }

    private static Command read(Replicator.GetResponse<?> r) {
      return new Read(
          r.key().id(),
          r instanceof Replicator.GetSuccess<?> ok
              ? Optional.of(changeOf(ok.key(), ok.dataValue()))
              : Optional.empty());
    }

    private Behavior<Command> onRead(Read r) {
      r.changed()
          .ifPresent(
              c -> {
                if (c instanceof CircuitsChanged m) {
                  onCircuitsChanged(m);
                } else if (c instanceof BreakersChanged m) {
                  onBreakersChanged(m);
                } else if (c instanceof SwitchesChanged m) {
                  onSwitchesChanged(m);
                }
              });
      if (--readsLeft == 0) {
        log.info(
            "routing state read from the cluster: {} model circuits, {} breaker openings, {}"
                + " conversation switches",
            circuits.size(),
            breakers.size(),
            switches.size());
        caughtUp.complete(Done.getInstance());
      }
      return Behaviors.same();
    }

    private Behavior<Command> onWritten(Written w) {
      if (!w.ok()) {
        // Written here; the other nodes get it by gossip, a little later.
        log.debug("routing state {} not yet on every node it was meant for", w.what());
      }
      return Behaviors.same();
    }

    private Replicator.WriteConsistency everyNode() {
      return new Replicator.WriteAll(settings.writeTimeout());
    }

    private void updateLongs(
        Key<LWWMap<String, Long>> key,
        Replicator.WriteConsistency consistency,
        String what,
        java.util.function.Function<LWWMap<String, Long>, LWWMap<String, Long>> modify) {
      longs.askUpdate(
          replyTo -> new Replicator.Update<>(key, LWWMap.create(), consistency, replyTo, modify),
          response -> new Written(what, response instanceof Replicator.UpdateSuccess));
    }

    private void updateTexts(
        Key<LWWMap<String, String>> key,
        Replicator.WriteConsistency consistency,
        String what,
        java.util.function.Function<LWWMap<String, String>, LWWMap<String, String>> modify) {
      texts.askUpdate(
          replyTo -> new Replicator.Update<>(key, LWWMap.create(), consistency, replyTo, modify),
          response -> new Written(what, response instanceof Replicator.UpdateSuccess));
    }

    /** A map's change as this actor's command (a deleted map is an empty one). */
    private static Command changed(Replicator.SubscribeResponse<?> r) {
      return r instanceof Replicator.Changed<?> changed
          ? changeOf(changed.key(), changed.dataValue())
          : changeOf(r.key(), LWWMap.create());
    }

    /** The entries of the map under {@code key} as its change command. */
    @SuppressWarnings("unchecked")
    private static Command changeOf(Key<?> key, Object data) {
      Map<String, ?> entries = Map.copyOf(((LWWMap<String, ?>) data).getEntries());
      if (key.equals(CIRCUITS)) {
        return new CircuitsChanged((Map<String, Long>) entries);
      }
      if (key.equals(BREAKERS)) {
        return new BreakersChanged((Map<String, String>) entries);
      }
      return new SwitchesChanged((Map<String, String>) entries);
    }

    private java.util.List<String> live() {
      return members.keySet().stream().toList();
    }

    private Member selfMember() {
      return Cluster.get(context.getSystem()).selfMember();
    }
  }

  private static String address(Member member) {
    return member.address().toString();
  }
}
