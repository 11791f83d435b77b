package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * What regional allowance transfers did to this ledger's caps (docs/MULTI-REGION.md): every
 * transfer it took out and every one it took in, by transfer id, and the net amount moved into each
 * cap window. A region's cap for a window is the configured one (its share) plus {@link #netIn}.
 * Immutable; a single-region ledger never journals a transfer and keeps {@link #NONE}, so its caps
 * are the configured ones, exactly as before.
 */
final class Allowances {
  static final Allowances NONE =
      new Allowances(PersistentMap.empty(), PersistentMap.empty(), PersistentMap.empty());

  private final PersistentMap<String, AllowanceOut> outs;
  private final PersistentMap<String, AllowanceIn> ins;
  private final PersistentMap<CapKey, Long> netIn;

  private Allowances(
      PersistentMap<String, AllowanceOut> outs,
      PersistentMap<String, AllowanceIn> ins,
      PersistentMap<CapKey, Long> netIn) {
    this.outs = outs;
    this.ins = ins;
    this.netIn = netIn;
  }

  /** Rebuilt from a snapshot's transfers: the net per window is their sum, so it is not stored. */
  static Allowances of(Collection<AllowanceOut> outs, Collection<AllowanceIn> ins) {
    Allowances a = NONE;
    for (AllowanceOut o : outs) {
      a = a.with(o);
    }
    for (AllowanceIn i : ins) {
      a = a.with(i);
    }
    return a;
  }

  /**
   * After {@code out}. Throws on a transfer id already taken out: the decider never writes one, so
   * a journal holding one is broken (verify names it).
   */
  Allowances with(AllowanceOut out) {
    if (outs.containsKey(out.transferId())) {
      throw new IllegalStateException(
          "allowance transfer " + out.transferId() + " taken out twice");
    }
    return new Allowances(outs.with(out.transferId(), out), ins, moved(out.key(), -out.micros()));
  }

  /** After {@code in}; throws on a transfer id already taken in (applied once per id). */
  Allowances with(AllowanceIn in) {
    if (ins.containsKey(in.transferId())) {
      throw new IllegalStateException("allowance transfer " + in.transferId() + " taken in twice");
    }
    return new Allowances(outs, ins.with(in.transferId(), in), moved(in.key(), in.micros()));
  }

  private PersistentMap<CapKey, Long> moved(CapKey key, long delta) {
    long net = netIn.getOrDefault(key, 0L) + delta;
    return net == 0 ? netIn.without(key) : netIn.with(key, net);
  }

  long netIn(CapKey key) {
    return netIn.getOrDefault(key, 0L);
  }

  AllowanceOut out(String transferId) {
    return outs.get(transferId);
  }

  AllowanceIn in(String transferId) {
    return ins.get(transferId);
  }

  /**
   * {@code caps} with each limit moved by what transfers moved into its window. The same list when
   * nothing moved (a single-region ledger: not a limit changes).
   */
  List<CapCheck.Applicable> applyTo(List<CapCheck.Applicable> caps) {
    if (netIn.size() == 0) {
      return caps;
    }
    List<CapCheck.Applicable> moved = new ArrayList<>(caps.size());
    for (CapCheck.Applicable c : caps) {
      long net = netIn(c.key());
      // A limit below zero refuses like a limit of zero (a region that lent everything).
      moved.add(
          net == 0 ? c : new CapCheck.Applicable(c.key(), Math.max(0, c.limitMicros() + net)));
    }
    return moved;
  }

  List<AllowanceOut> outs() {
    return List.copyOf(outs.values());
  }

  List<AllowanceIn> ins() {
    return List.copyOf(ins.values());
  }

  boolean isEmpty() {
    return outs.size() == 0 && ins.size() == 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Allowances other
        && outs.asMap().equals(other.outs.asMap())
        && ins.asMap().equals(other.ins.asMap());
  }

  @Override
  public int hashCode() {
    return outs.size() * 31 + ins.size();
  }

  @Override
  public String toString() {
    return "Allowances(out=" + outs.size() + ", in=" + ins.size() + ")";
  }
}
