package dev.spendgateway.ledger.audit;

import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The check across regions that one journal cannot make (docs/MULTI-REGION.md): every allowance
 * transfer taken in was taken out, by the region it names, of the same window and for at least as
 * much — never more in than out per transfer id — so the allowances of all regions never sum above
 * the cap. Fed with the replayed states of several regions' journals ({@code gateway-admin verify
 * --peer-export}). A transfer taken out and not yet in is in flight, which is not a violation.
 */
public final class AllowanceAudit {
  private final Map<String, List<AllowanceOut>> outs = new HashMap<>();
  private final Map<String, List<AllowanceIn>> ins = new LinkedHashMap<>();

  /** Adds one region's transfers, as its replayed journal holds them. */
  public AllowanceAudit add(LedgerState replayed) {
    for (AllowanceOut o : replayed.allowanceOuts()) {
      outs.computeIfAbsent(o.transferId(), id -> new ArrayList<>()).add(o);
    }
    for (AllowanceIn i : replayed.allowanceIns()) {
      ins.computeIfAbsent(i.transferId(), id -> new ArrayList<>()).add(i);
    }
    return this;
  }

  /** Every broken transfer, one line each; empty when all hold. */
  public List<String> violations() {
    List<String> broken = new ArrayList<>();
    for (Map.Entry<String, List<AllowanceOut>> e : outs.entrySet()) {
      if (e.getValue().size() > 1) {
        broken.add("allowance transfer " + e.getKey() + " taken out in more than one journal");
      }
    }
    for (Map.Entry<String, List<AllowanceIn>> e : ins.entrySet()) {
      String id = e.getKey();
      if (e.getValue().size() > 1) {
        broken.add("allowance transfer " + id + " taken in in more than one journal");
        continue;
      }
      AllowanceIn in = e.getValue().get(0);
      List<AllowanceOut> out = outs.get(id);
      if (out == null) {
        broken.add(
            "allowance transfer "
                + id
                + " taken in by "
                + in.toRegion()
                + " but taken out in none of the journals given");
      } else if (!out.get(0).fromRegion().equals(in.fromRegion())
          || !out.get(0).toRegion().equals(in.toRegion())
          || !out.get(0).key().equals(in.key())) {
        broken.add("allowance transfer " + id + " taken in with other regions or window than out");
      } else if (in.micros() > out.get(0).micros()) {
        broken.add(
            "allowance transfer "
                + id
                + " taken in for more than was taken out ("
                + in.micros()
                + " > "
                + out.get(0).micros()
                + " micro-dollars)");
      }
    }
    return broken;
  }

  /** Transfers taken out and not (yet) taken in anywhere given: in flight. */
  public long inFlight() {
    return outs.keySet().stream().filter(id -> !ins.containsKey(id)).count();
  }
}
