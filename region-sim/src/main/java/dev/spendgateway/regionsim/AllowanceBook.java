package dev.spendgateway.regionsim;

import dev.spendgateway.policy.caps.CapKey;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one region's transfers did to its allowances: the net amount moved in per cap window, every
 * out it journaled (kept so a recovered region re-sends those not yet acknowledged) and every
 * transfer id it applied in (so a repeated {@code Give} is applied once). Immutable: {@link
 * #applied} returns a new book, like {@code LedgerState.applied}; a region's book is the fold of
 * its journal's transfer records, so a crash loses nothing the journal kept.
 */
record AllowanceBook(
    Map<CapKey, Long> netIn, Map<String, Entry.AllowanceOut> outs, Map<String, Long> inIds) {

  static final AllowanceBook EMPTY = new AllowanceBook(Map.of(), Map.of(), Map.of());

  /** Net allowance moved into {@code key} (negative when this region lent more than it got). */
  long netIn(CapKey key) {
    return netIn.getOrDefault(key, 0L);
  }

  boolean appliedIn(String transferId) {
    return inIds.containsKey(transferId);
  }

  boolean tookOut(String transferId) {
    return outs.containsKey(transferId);
  }

  AllowanceBook applied(Entry.TransferHalf half) {
    Map<CapKey, Long> net = new HashMap<>(netIn);
    if (half instanceof Entry.AllowanceOut out) {
      if (outs.containsKey(out.transferId())) {
        throw new IllegalStateException("transfer " + out.transferId() + " taken out twice");
      }
      net.merge(out.key(), -out.micros(), Long::sum);
      Map<String, Entry.AllowanceOut> newOuts = new LinkedHashMap<>(outs);
      newOuts.put(out.transferId(), out);
      return new AllowanceBook(Map.copyOf(net), Collections.unmodifiableMap(newOuts), inIds);
    }
    Entry.AllowanceIn in = (Entry.AllowanceIn) half;
    if (inIds.containsKey(in.transferId())) {
      throw new IllegalStateException("transfer " + in.transferId() + " applied in twice");
    }
    net.merge(in.key(), in.micros(), Long::sum);
    Map<String, Long> ids = new HashMap<>(inIds);
    ids.put(in.transferId(), in.micros());
    return new AllowanceBook(Map.copyOf(net), outs, Map.copyOf(ids));
  }
}
