package dev.spendgateway.regionsim;

/** Who moves allowance, and when (docs/MULTI-REGION.md, "Who moves allowance"). */
enum Policy {
  /** No transfers: each region spends its configured share and never more. */
  STATIC("no transfers; each region spends its share"),
  /** A region below its low-water mark asks every reachable peer; each lends what it can spare. */
  PULL("low region asks all peers; each lends min(ask, headroom-floor, rate)"),
  /** Every 30 s a region above the gossiped mean lends half the difference to the neediest peer. */
  PUSH("region above the gossiped mean lends to the neediest peer"),
  /**
   * Broken on purpose: the borrower adds allowance before the lender takes it out (the reverse of
   * the design). Never a choice for a deployment: it exists so a test proves the checker fails.
   */
  ADD_FIRST("BROKEN: borrower adds before lender takes out"),
  /** Reference: one ledger holding the whole cap, no network, no crash. */
  GLOBAL("reference: one global ledger, no network");

  final String description;

  Policy(String description) {
    this.description = description;
  }

  /** The policies a default run compares (the broken one only on request). */
  static Policy[] compared() {
    return new Policy[] {GLOBAL, STATIC, PULL, PUSH};
  }
}
