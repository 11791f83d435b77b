package dev.spendgateway.upstream.failover.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import dev.spendgateway.upstream.failover.ProviderRateLimits.Limits;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What a node does with the replicated routing state: every piece with its own clock (a nano time
 * for the node's state, a wall clock for the replicated times), no cluster needed.
 */
class RoutingReplicaTest {
  private static final String SELF = "pekko://gateway@127.0.0.1:2552";
  private static final String OTHER = "pekko://gateway@127.0.0.1:2553";
  private static final long T0 = Instant.parse("2026-12-06T01:00:00Z").toEpochMilli();

  private static ActorTestKit testKit;

  private final AtomicLong nanos = new AtomicLong(1_000_000_000_000L);
  private final AtomicLong wallMillis = new AtomicLong(T0);
  private final List<String> alarms = new ArrayList<>();
  private ModelCircuits circuits;
  private ProviderBreakers breakers;
  private ConversationStickiness stickiness;
  private ProviderRateLimits rateLimits;
  private RoutingReplica replica;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @BeforeEach
  void build() {
    circuits = new ModelCircuits(Optional.of(Duration.ofHours(1)), nanos::get, alarms::add);
    breakers =
        new ProviderBreakers(
            testKit.system().classicSystem().scheduler(),
            new ProviderBreakers.Settings(
                3, Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofMinutes(5)),
            (p, s) -> {},
            ProviderBreakers.Sharing.NONE,
            nanos::get);
    stickiness = new ConversationStickiness(100, Duration.ofMinutes(30), nanos::get);
    rateLimits =
        new ProviderRateLimits(
            Map.of(Provider.OPENAI, new Limits(30, 0)), Duration.ZERO, nanos::get);
    replica = new RoutingReplica(circuits, breakers, stickiness, rateLimits, clock(), SELF);
  }

  private Clock clock() {
    return new WallClock(wallMillis);
  }

  private void elapse(Duration d) {
    nanos.addAndGet(d.toNanos());
    wallMillis.addAndGet(d.toMillis());
  }

  @Test
  void aCircuitOpenedElsewhereIsOpenHereWithoutASecondAlarmAndAResetClosesIt() {
    replica.applyCircuits(Map.of("gpt-4.1", T0 - 1_000));

    assertTrue(circuits.isOpen("gpt-4.1"));
    assertTrue(alarms.isEmpty(), "the node that got the 410 raised the alarm");

    replica.applyCircuits(Map.of());
    assertFalse(circuits.isOpen("gpt-4.1"), "an operator reset on another node closes it here");
  }

  @Test
  void aCircuitOpenedElsewhereExpiresWhenItWouldHaveThere() {
    replica.applyCircuits(Map.of("gpt-4.1", T0 - Duration.ofMinutes(59).toMillis()));
    assertTrue(circuits.isOpen("gpt-4.1"));
    elapse(Duration.ofMinutes(1));
    assertFalse(circuits.isOpen("gpt-4.1"), "open for an hour from its opening, not from here");

    replica.applyCircuits(Map.of("gpt-6-sol", T0 - Duration.ofHours(2).toMillis()));
    assertFalse(circuits.isOpen("gpt-6-sol"), "an expired opening does not open it");
  }

  @Test
  void anotherNodesBreakerOpeningHoldsHereUntilItsResetTimeoutOrItsClose() {
    long until = T0 + Duration.ofSeconds(30).toMillis();
    replica.applyBreakers(Map.of("anthropic", RoutingReplica.breakerValue(until, OTHER)));

    assertFalse(breakers.isCallAllowed(Provider.ANTHROPIC));
    assertEquals(ProviderBreakers.State.OPEN, breakers.state(Provider.ANTHROPIC));
    assertTrue(breakers.isCallAllowed(Provider.OPENAI), "the other provider is not affected");
    elapse(Duration.ofSeconds(30));
    assertTrue(
        breakers.isCallAllowed(Provider.ANTHROPIC), "half-open for this node once it passed");

    replica.applyBreakers(
        Map.of("anthropic", RoutingReplica.breakerValue(wallMillis.get() + 30_000, OTHER)));
    assertFalse(breakers.isCallAllowed(Provider.ANTHROPIC));
    replica.applyBreakers(Map.of());
    assertTrue(breakers.isCallAllowed(Provider.ANTHROPIC), "the other node's breaker closed");
  }

  @Test
  void thisNodesOwnBreakerOpeningIsNotAppliedTwice() {
    replica.applyBreakers(Map.of("openai", RoutingReplica.breakerValue(T0 + 30_000, SELF)));
    assertTrue(breakers.isCallAllowed(Provider.OPENAI), "this node's own breaker decides here");
  }

  @Test
  void aRefusedCallThroughAnOpeningElsewhereFailsFastWithoutCallingTheProvider() {
    replica.applyBreakers(Map.of("openai", RoutingReplica.breakerValue(T0 + 30_000, OTHER)));
    AtomicLong called = new AtomicLong();
    var stage =
        breakers.withBreaker(
            Provider.OPENAI,
            () -> {
              called.incrementAndGet();
              return java.util.concurrent.CompletableFuture.completedFuture(200);
            });
    assertTrue(stage.toCompletableFuture().isCompletedExceptionally());
    assertEquals(0, called.get());
  }

  @Test
  void aSwitchMadeElsewhereHoldsHereUntilItsTtlFromTheLastSharedCall() {
    replica.applySwitches(
        Map.of(
            "conv-1", RoutingReplica.switchValue(Provider.ANTHROPIC, T0 - 60_000),
            "conv-old",
                RoutingReplica.switchValue(
                    Provider.ANTHROPIC, T0 - Duration.ofMinutes(31).toMillis())));

    assertEquals(Optional.of(Provider.ANTHROPIC), stickiness.find("conv-1"));
    assertEquals(Optional.empty(), stickiness.find("conv-old"), "expired before it arrived");
    elapse(Duration.ofMinutes(30));
    assertEquals(Optional.empty(), stickiness.find("conv-1"), "no call for 30 minutes");
  }

  @Test
  void aLaterCallHereKeepsItsOwnTimeOverAnOlderOneFromElsewhere() {
    stickiness.stick("conv-2", Provider.ANTHROPIC);
    elapse(Duration.ofMinutes(20));
    stickiness.find("conv-2"); // a call here now
    replica.applySwitches(Map.of("conv-2", RoutingReplica.switchValue(Provider.ANTHROPIC, T0)));
    elapse(Duration.ofMinutes(15));
    assertEquals(
        Optional.of(Provider.ANTHROPIC),
        stickiness.find("conv-2"),
        "15 minutes after the call here, not 35 after the one shared");
  }

  static Stream<Arguments> memberships() {
    return Stream.of(
        Arguments.of("alone (before the membership lists it)", List.of(), 30),
        Arguments.of("first of three", List.of(SELF, OTHER, "pekko://gateway@127.0.0.1:2554"), 10),
        Arguments.of("last of two", List.of("pekko://gateway@127.0.0.1:2551", SELF), 15),
        Arguments.of(
            "second of three, not yet listed",
            List.of("pekko://gateway@127.0.0.1:2551", OTHER),
            10));
  }

  @ParameterizedTest(name = "{0}: {2} requests a minute")
  @MethodSource("memberships")
  void theLiveMembersSetThisNodesShare(String when, List<String> live, int share) {
    replica.applyMembers(live);
    int went = 0;
    for (int i = 0; i < 40; i++) {
      if (rateLimits.take(Provider.OPENAI, 1) instanceof ProviderRateLimits.Turn.Go go
          && go.after().isZero()) {
        went++;
      }
    }
    assertEquals(share, went);
  }

  @Test
  void theFirstNodeInAddressOrderSweeps() {
    assertTrue(replica.sweeps(List.of(SELF, OTHER)));
    assertFalse(replica.sweeps(List.of("pekko://gateway@127.0.0.1:2551", SELF)));
  }

  static Stream<Arguments> expiries() {
    long now = T0;
    return Stream.of(
        Arguments.of(
            "circuits open for an hour",
            RoutingReplica.expiredCircuits(
                Map.of("old", now - 3_600_000, "new", now - 1_000),
                Optional.of(Duration.ofHours(1)),
                now),
            Set.of("old")),
        Arguments.of(
            "circuits open for ever never expire",
            RoutingReplica.expiredCircuits(
                Map.of("old", now - 86_400_000L * 7), Optional.empty(), now),
            Set.of()),
        Arguments.of(
            "breaker openings past their time, or unreadable",
            RoutingReplica.expiredBreakers(
                Map.of(
                    "openai", RoutingReplica.breakerValue(now, OTHER),
                    "anthropic", RoutingReplica.breakerValue(now + 1, OTHER),
                    "bad", "x"),
                now),
            Set.of("openai", "bad")),
        Arguments.of(
            "switches whose last shared call is a ttl ago",
            RoutingReplica.expiredSwitches(
                Map.of(
                    "a", RoutingReplica.switchValue(Provider.ANTHROPIC, now - 1_800_000),
                    "b", RoutingReplica.switchValue(Provider.ANTHROPIC, now - 1_799_999),
                    "c", "nonsense"),
                Duration.ofMinutes(30),
                now),
            Set.of("a", "c")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("expiries")
  void expiredEntriesAreSwept(String what, Set<String> expired, Set<String> expected) {
    assertEquals(expected, expired);
  }
}
