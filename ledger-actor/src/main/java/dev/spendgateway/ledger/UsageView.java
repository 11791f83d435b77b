package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.LedgerState.BrandCaps;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import dev.spendgateway.policy.caps.WindowCalendar;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;

/**
 * The {@code /usage} view of the ledger state: every cap window that {@code now} falls in (in the
 * state's calendar, so the dates of {@code ledger.window-zone}), with limit, settled and held
 * spend, and the zone those windows are counted in. A read of the state, never a change to it.
 */
final class UsageView {
  private UsageView() {}

  /**
   * With a subject, the global and pool caps plus that subject's own. Without, the global and pool
   * caps plus the caps of the {@code topSubjects} subjects with the most spent + held in the
   * current windows (ties by subject id), and how many subjects are active in all: an operator
   * needs the biggest spenders at a glance, and a list of every preview id ever seen would grow
   * without end.
   */
  static Usage of(
      LedgerState state, Optional<String> subject, int topSubjects, Instant now, CapLimits limits) {
    WindowCalendar calendar = state.calendar();
    String day = calendar.dayKey(now);
    String month = calendar.monthKey(now);
    List<CapUsage> caps = new ArrayList<>();
    caps.add(
        capUsage(state, new CapKey(CapName.GLOBAL_DAILY, null, day), limits.globalDailyMicros()));
    caps.add(
        capUsage(
            state, new CapKey(CapName.GLOBAL_MONTHLY, null, month), limits.globalMonthlyMicros()));
    caps.add(capUsage(state, new CapKey(CapName.FREE_DAILY, null, day), limits.freeDailyMicros()));
    caps.add(
        capUsage(state, new CapKey(CapName.TRIAL_DAILY, null, day), limits.trialDailyMicros()));
    // Each subject's current keys and how much it uses in them (spent + held, summed).
    Map<String, List<CapKey>> keysBySubject = new HashMap<>();
    Map<String, Long> usedBySubject = new HashMap<>();
    for (CapKey k : state.spendByKey().asMap().keySet()) {
      boolean current =
          k.window().equals(day)
              || k.window().equals(month)
              || k.window().equals(CapWindows.LIFETIME);
      if (k.cap().perSubject() && current && subject.map(s -> s.equals(k.subject())).orElse(true)) {
        keysBySubject.computeIfAbsent(k.subject(), s -> new ArrayList<>()).add(k);
        Spend used = state.spendOn(k);
        usedBySubject.merge(k.subject(), used.settledMicros() + used.reservedMicros(), Long::sum);
      }
    }
    int activeSubjects = keysBySubject.size();
    List<CapKey> subjectKeys = new ArrayList<>();
    if (subject.isPresent()) {
      String s = subject.get();
      subjectKeys.addAll(keysBySubject.getOrDefault(s, List.of()));
      BrandCaps bc = state.brandCapsBySubject().get(s);
      if (bc != null) {
        addIfAbsent(subjectKeys, new CapKey(CapName.BRAND_DAILY, s, day));
        addIfAbsent(subjectKeys, new CapKey(CapName.BRAND_MONTHLY, s, month));
      }
    } else {
      for (String s : topByUse(usedBySubject, topSubjects)) {
        subjectKeys.addAll(keysBySubject.get(s));
      }
    }
    subjectKeys.sort(Comparator.comparing((CapKey k) -> k.subject()).thenComparing(CapKey::cap));
    for (CapKey k : subjectKeys) {
      caps.add(capUsage(state, k, limitOf(state, k, limits)));
    }
    return new Usage(
        List.copyOf(caps), state.openReservations(), activeSubjects, zoneName(calendar, now));
  }

  /** The zone {@code now}'s windows are counted in, as its IANA id ({@code Europe/Istanbul}). */
  static String zoneName(WindowCalendar calendar, Instant now) {
    ZoneId zone = calendar.zoneAt(now);
    // ZoneOffset.UTC's id is "Z"; the contract names it "UTC".
    return zone.equals(ZoneOffset.UTC) ? "UTC" : zone.getId();
  }

  /**
   * The {@code n} subjects using the most, by a bounded heap (n log n, not a sort of all of them).
   */
  static List<String> topByUse(Map<String, Long> usedBySubject, int n) {
    if (n == 0) {
      return List.of();
    }
    Comparator<Map.Entry<String, Long>> byUse =
        Map.Entry.<String, Long>comparingByValue()
            .thenComparing(Map.Entry.comparingByKey(Comparator.reverseOrder()));
    PriorityQueue<Map.Entry<String, Long>> smallestFirst = new PriorityQueue<>(byUse);
    for (Map.Entry<String, Long> e : usedBySubject.entrySet()) {
      smallestFirst.add(e);
      if (smallestFirst.size() > n) {
        smallestFirst.poll();
      }
    }
    List<String> top = new ArrayList<>(smallestFirst.size());
    smallestFirst.forEach(e -> top.add(e.getKey()));
    return top;
  }

  private static void addIfAbsent(List<CapKey> keys, CapKey key) {
    if (!keys.contains(key)) {
      keys.add(key);
    }
  }

  private static long limitOf(LedgerState state, CapKey key, CapLimits limits) {
    BrandCaps bc = state.brandCapsBySubject().getOrDefault(key.subject(), new BrandCaps(0, 0));
    return switch (key.cap()) {
      case PREVIEW_LIFETIME -> limits.previewLifetimeMicros();
      case BRAND_DAILY -> bc.dailyMicros();
      case BRAND_MONTHLY -> bc.monthlyMicros();
      default -> throw new IllegalArgumentException("not a subject cap: " + key);
    };
  }

  private static CapUsage capUsage(LedgerState state, CapKey key, long limitMicros) {
    Spend s = state.spendOn(key);
    return new CapUsage(
        key.cap(), key.subject(), key.window(), limitMicros, s.settledMicros(), s.reservedMicros());
  }
}
