package dev.spendgateway.upstream.failover.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.Eventually;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import dev.spendgateway.upstream.failover.ProviderRateLimits.Limits;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The replica on a one-node cluster, with time from the test: what this node opens and switches
 * lands in the replicated maps, it is ready once it has read them, and expired entries are swept
 * out of the maps (so they stay bounded however long the cluster runs).
 */
class ClusterRoutingTest {
  private static final Config CLUSTER =
      ConfigFactory.parseMap(
              Map.of(
                  "pekko.actor.provider", "cluster",
                  "pekko.remote.artery.canonical.hostname", "127.0.0.1",
                  "pekko.remote.artery.canonical.port", 0,
                  "pekko.cluster.distributed-data.notify-subscribers-interval", "50ms"))
          .withFallback(ConfigFactory.load());

  private final AtomicLong nanos = new AtomicLong(1_000_000_000_000L);
  private final AtomicLong wallMillis =
      new AtomicLong(Instant.parse("2026-12-06T01:00:00Z").toEpochMilli());
  private ActorTestKit testKit;
  private ClusterRouting routing;
  private ModelCircuits circuits;
  private ConversationStickiness stickiness;
  private ProviderRateLimits rateLimits;

  @BeforeEach
  void start() {
    testKit = ActorTestKit.create("routing", CLUSTER);
    Cluster cluster = Cluster.get(testKit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    routing =
        ClusterRouting.start(
            testKit.system(),
            new ClusterRouting.Settings(Duration.ofSeconds(1), Duration.ofMillis(100)),
            clock());
    circuits = new ModelCircuits(Optional.empty(), nanos::get, model -> {}, routing);
    stickiness = new ConversationStickiness(100, Duration.ofMinutes(30), nanos::get, routing);
    rateLimits =
        new ProviderRateLimits(
            Map.of(Provider.OPENAI, new Limits(30, 0)), Duration.ZERO, nanos::get);
    ProviderBreakers breakers =
        new ProviderBreakers(
            testKit.system().classicSystem().scheduler(),
            new ProviderBreakers.Settings(
                3, Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofMinutes(5)),
            (p, s) -> {},
            routing,
            nanos::get);
    routing.attach(new ClusterRouting.Targets(circuits, breakers, stickiness, rateLimits));
  }

  @AfterEach
  void stop() {
    testKit.shutdownTestKit();
  }

  private Clock clock() {
    return new WallClock(wallMillis);
  }

  @Test
  void whatThisNodeOpensAndSwitchesIsReplicatedAndExpiredSwitchesAreSweptOut() throws Exception {
    routing.caughtUp().toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertEquals(1, rateLimits.sharedAmong(), "one node: the whole limit");

    circuits.onModelGone("gpt-4.1");
    stickiness.stick("conv-1", Provider.ANTHROPIC);
    Eventually.until(
        "the circuit and the switch are in the replicated maps",
        Duration.ofSeconds(10),
        () ->
            read(ClusterRouting.CIRCUITS).containsKey("gpt-4.1")
                && read(ClusterRouting.SWITCHES).containsKey("conv-1"));

    // 31 minutes without a call: the switch has expired, on this node and in the map; a circuit
    // open for ever stays.
    nanos.addAndGet(Duration.ofMinutes(31).toNanos());
    wallMillis.addAndGet(Duration.ofMinutes(31).toMillis());
    Eventually.until(
        "the expired switch is swept out of the map",
        Duration.ofSeconds(10),
        () -> read(ClusterRouting.SWITCHES).isEmpty() && stickiness.size() == 0);
    assertTrue(read(ClusterRouting.CIRCUITS).containsKey("gpt-4.1"));
    assertTrue(circuits.isOpen("gpt-4.1"));
  }

  @Test
  void anOperatorResetRemovesTheCircuitFromTheMap() throws Exception {
    routing.caughtUp().toCompletableFuture().get(20, TimeUnit.SECONDS);
    circuits.onModelGone("gpt-6-sol");
    Eventually.until(
        "the circuit is in the map",
        Duration.ofSeconds(10),
        () -> read(ClusterRouting.CIRCUITS).containsKey("gpt-6-sol"));

    circuits.reset("gpt-6-sol");
    Eventually.until(
        "the reset reached the map",
        Duration.ofSeconds(10),
        () -> !read(ClusterRouting.CIRCUITS).containsKey("gpt-6-sol"));
    assertTrue(!circuits.isOpen("gpt-6-sol"));
  }

  private <V> Map<String, V> read(Key<LWWMap<String, V>> key) throws Exception {
    Replicator.GetResponse<LWWMap<String, V>> answer =
        org.apache.pekko.actor.typed.javadsl.AskPattern
            .<Replicator.Command, Replicator.GetResponse<LWWMap<String, V>>>ask(
                DistributedData.get(testKit.system()).replicator(),
                replyTo -> new Replicator.Get<>(key, Replicator.readLocal(), replyTo),
                Duration.ofSeconds(3),
                testKit.system().scheduler())
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS);
    return answer instanceof Replicator.GetSuccess<LWWMap<String, V>> ok
        ? ok.get(key).getEntries()
        : Map.of();
  }
}
