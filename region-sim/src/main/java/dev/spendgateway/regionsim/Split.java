package dev.spendgateway.regionsim;

import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import java.util.List;

/**
 * The configured split of every company-wide cap into regional shares: {@code cap × weight / Σ
 * weights}, rounded down, with what rounding left over given to region 0, so the shares of a window
 * sum to its cap exactly. Every region computes every share from the same configuration, so a new
 * day or month starts without a message.
 */
record Split(long dailyCapMicros, long monthlyCapMicros, List<Integer> weights) {
  Split {
    weights = List.copyOf(weights);
    if (weights.isEmpty() || weights.stream().anyMatch(w -> w <= 0)) {
      throw new IllegalArgumentException("every region needs a positive weight");
    }
  }

  int regions() {
    return weights.size();
  }

  /** The company-wide cap of {@code key}'s window: only the two global caps are split here. */
  long cap(CapKey key) {
    if (key.cap() == CapName.GLOBAL_DAILY) {
      return dailyCapMicros;
    } else if (key.cap() == CapName.GLOBAL_MONTHLY) {
      return monthlyCapMicros;
    }
    throw new IllegalArgumentException("not a split cap: " + key);
  }

  long share(int region, CapKey key) {
    long cap = cap(key);
    long total = 0;
    for (int w : weights) {
      total += w;
    }
    long own = Math.multiplyExact(cap, (long) weights.get(region)) / total;
    if (region != 0) {
      return own;
    }
    long others = 0;
    for (int r = 1; r < weights.size(); r++) {
      others += Math.multiplyExact(cap, (long) weights.get(r)) / total;
    }
    return cap - others;
  }
}
