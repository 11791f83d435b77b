package dev.spendgateway.upstream.failover.cluster;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a cluster node does with the routing state the cluster replicates, without the actor around
 * it: applies the replicated maps to this node's circuits, breakers and conversation switches, the
 * membership to its share of the rate limits, and picks the entries that have expired. The maps'
 * times are wall-clock milliseconds (the nodes' clocks, kept in step by NTP), turned into "how long
 * ago" against this node's {@link Clock}.
 *
 * <p>The replicated maps, each one Distributed Data {@code LWWMap}:
 *
 * <ul>
 *   <li>model circuits: model → when its circuit opened; an operator reset removes it;
 *   <li>breakers: provider → {@link #breakerValue "until node"}: a breaker that opened on {@code
 *       node} holds for the cluster until then; removed when that node's breaker closes;
 *   <li>conversation switches: conversation id → {@link #switchValue "provider seenAt"}: the
 *       provider it switched to and its latest call that was shared.
 * </ul>
 *
 * Not thread-safe: one actor owns it.
 */
public final class RoutingReplica {
  private final ModelCircuits circuits;
  private final ProviderBreakers breakers;
  private final ConversationStickiness stickiness;
  private final ProviderRateLimits rateLimits;
  private final Clock clock;
  private final String self;

  private Map<String, Long> lastCircuits = Map.of();
  private Map<String, String> lastBreakers = Map.of();
  private Map<String, String> lastSwitches = Map.of();

  /**
   * @param self this node's address as the membership gives it (to skip its own breaker openings
   *     and to find its place among the nodes)
   */
  public RoutingReplica(
      ModelCircuits circuits,
      ProviderBreakers breakers,
      ConversationStickiness stickiness,
      ProviderRateLimits rateLimits,
      Clock clock,
      String self) {
    this.circuits = circuits;
    this.breakers = breakers;
    this.stickiness = stickiness;
    this.rateLimits = rateLimits;
    this.clock = clock;
    this.self = self;
  }

  /** The breakers' value: open until {@code untilMillis}, opened on {@code node}. */
  public static String breakerValue(long untilMillis, String node) {
    return untilMillis + " " + node;
  }

  /** The switches' value: on {@code provider}, latest shared call at {@code seenAtMillis}. */
  public static String switchValue(Provider provider, long seenAtMillis) {
    return provider.wireName() + " " + seenAtMillis;
  }

  /** The replicated model circuits changed: opens what opened elsewhere, closes what was reset. */
  public void applyCircuits(Map<String, Long> next) {
    long now = clock.millis();
    for (Map.Entry<String, Long> e : next.entrySet()) {
      if (!Objects.equals(lastCircuits.get(e.getKey()), e.getValue())) {
        circuits.openedElsewhere(e.getKey(), Duration.ofMillis(now - e.getValue()));
      }
    }
    for (String model : lastCircuits.keySet()) {
      if (!next.containsKey(model)) {
        circuits.closedElsewhere(model);
      }
    }
    lastCircuits = Map.copyOf(next);
  }

  /**
   * The replicated breaker openings changed: another node's opening holds here for what is left of
   * it; a removed one (that node's breaker closed) no longer does. This node's own are skipped: its
   * breaker already knows.
   */
  public void applyBreakers(Map<String, String> next) {
    long now = clock.millis();
    for (Map.Entry<String, String> e : next.entrySet()) {
      Optional<Provider> provider = provider(e.getKey());
      Optional<Opening> opening = Opening.parse(e.getValue());
      if (provider.isEmpty()
          || opening.isEmpty()
          || opening.get().node().equals(self)
          || Objects.equals(lastBreakers.get(e.getKey()), e.getValue())) {
        continue;
      }
      breakers.openedElsewhere(
          provider.get(), Duration.ofMillis(opening.get().untilMillis() - now));
    }
    for (String key : lastBreakers.keySet()) {
      if (!next.containsKey(key)) {
        provider(key).ifPresent(breakers::closedElsewhere);
      }
    }
    lastBreakers = Map.copyOf(next);
  }

  /** The replicated conversation switches changed: each new or later one is kept here too. */
  public void applySwitches(Map<String, String> next) {
    long now = clock.millis();
    for (Map.Entry<String, String> e : next.entrySet()) {
      if (Objects.equals(lastSwitches.get(e.getKey()), e.getValue())) {
        continue;
      }
      Seen.parse(e.getValue())
          .ifPresent(
              seen ->
                  stickiness.seenElsewhere(
                      e.getKey(), seen.provider(), Duration.ofMillis(now - seen.atMillis())));
    }
    lastSwitches = Map.copyOf(next);
  }

  /**
   * The live members changed: this node's share of the rate limits is the limits divided among
   * them, by its place in address order. This node counts even before the membership lists it.
   */
  public void applyMembers(Collection<String> live) {
    TreeSet<String> nodes = new TreeSet<>(live);
    nodes.add(self);
    int rank = nodes.headSet(self).size();
    rateLimits.shareAmong(nodes.size(), rank);
  }

  /**
   * Models whose replicated circuit has expired ({@code openFor} after it opened); none if open for
   * ever.
   */
  public static Set<String> expiredCircuits(
      Map<String, Long> circuits, Optional<Duration> openFor, long nowMillis) {
    Set<String> out = new TreeSet<>();
    openFor.ifPresent(
        d ->
            circuits.forEach(
                (model, at) -> {
                  if (nowMillis - at >= d.toMillis()) {
                    out.add(model);
                  }
                }));
    return out;
  }

  /** Providers whose replicated opening has passed (or cannot be read). */
  public static Set<String> expiredBreakers(Map<String, String> breakers, long nowMillis) {
    Set<String> out = new TreeSet<>();
    breakers.forEach(
        (provider, value) -> {
          if (Opening.parse(value).map(o -> o.untilMillis() <= nowMillis).orElse(true)) {
            out.add(provider);
          }
        });
    return out;
  }

  /** Conversations whose latest shared call is {@code ttl} or more ago (or cannot be read). */
  public static Set<String> expiredSwitches(
      Map<String, String> switches, Duration ttl, long nowMillis) {
    Set<String> out = new TreeSet<>();
    switches.forEach(
        (id, value) -> {
          if (Seen.parse(value).map(s -> nowMillis - s.atMillis() >= ttl.toMillis()).orElse(true)) {
            out.add(id);
          }
        });
    return out;
  }

  /** Whether this node is the first in address order among {@code live}: it sweeps the maps. */
  public boolean sweeps(Collection<String> live) {
    Set<String> nodes = new TreeSet<>(live);
    nodes.add(self);
    return nodes.iterator().next().equals(self);
  }

  private static Optional<Provider> provider(String wireName) {
    try {
      return Optional.of(Provider.fromWireName(wireName));
    } catch (IllegalArgumentException unknown) {
      return Optional.empty();
    }
  }

  private record Opening(long untilMillis, String node) {
    static Optional<Opening> parse(String value) {
      int space = value.indexOf(' ');
      if (space < 1) {
        return Optional.empty();
      }
      try {
        return Optional.of(
            new Opening(Long.parseLong(value.substring(0, space)), value.substring(space + 1)));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }
  }

  private record Seen(Provider provider, long atMillis) {
    static Optional<Seen> parse(String value) {
      int space = value.lastIndexOf(' ');
      if (space < 1) {
        return Optional.empty();
      }
      try {
        return RoutingReplica.provider(value.substring(0, space))
            .map(p -> new Seen(p, Long.parseLong(value.substring(space + 1))));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
    }
  }
}
