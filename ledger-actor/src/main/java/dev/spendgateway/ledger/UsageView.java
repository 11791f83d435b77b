package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.LedgerState.BrandCaps;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The {@code /usage} view of the ledger state: every cap window that {@code now} falls in, with
 * limit, settled and held spend. A read of the state, never a change to it.
 */
final class UsageView {
  private UsageView() {}

  /**
   * With a subject, the global and pool caps plus that subject's own; without, every subject active
   * in the current windows.
   */
  static Usage of(LedgerState state, Optional<String> subject, Instant now, CapLimits limits) {
    String day = CapWindows.dayKey(now);
    String month = CapWindows.monthKey(now);
    List<CapUsage> caps = new ArrayList<>();
    caps.add(capUsage(state, new CapKey(CapName.GLOBAL_DAILY, null, day), limits.globalDailyMicros()));
    caps.add(capUsage(state, new CapKey(CapName.GLOBAL_MONTHLY, null, month), limits.globalMonthlyMicros()));
    caps.add(capUsage(state, new CapKey(CapName.FREE_DAILY, null, day), limits.freeDailyMicros()));
    caps.add(capUsage(state, new CapKey(CapName.TRIAL_DAILY, null, day), limits.trialDailyMicros()));
    List<CapKey> subjectKeys = new ArrayList<>();
    for (CapKey k : state.spendByKey().asMap().keySet()) {
      boolean current = k.window().equals(day) || k.window().equals(month) || k.window().equals(CapWindows.LIFETIME);
      if (k.cap().perSubject() && current && subject.map(s -> s.equals(k.subject())).orElse(true)) {
        subjectKeys.add(k);
      }
    }
    subject.ifPresent(s -> {
      BrandCaps bc = state.brandCapsBySubject().get(s);
      if (bc != null) {
        addIfAbsent(subjectKeys, new CapKey(CapName.BRAND_DAILY, s, day));
        addIfAbsent(subjectKeys, new CapKey(CapName.BRAND_MONTHLY, s, month));
      }
    });
    subjectKeys.sort(Comparator.comparing((CapKey k) -> k.subject()).thenComparing(CapKey::cap));
    for (CapKey k : subjectKeys) {
      caps.add(capUsage(state, k, limitOf(state, k, limits)));
    }
    return new Usage(List.copyOf(caps), state.openReservations());
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
    return new CapUsage(key.cap(), key.subject(), key.window(), limitMicros, s.settledMicros(), s.reservedMicros());
  }
}
