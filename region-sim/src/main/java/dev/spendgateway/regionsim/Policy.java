package dev.spendgateway.regionsim;

/** Who moves allowance, and when (docs/MULTI-REGION.md, "Who moves allowance"). */
enum Policy {
  /** No transfers: each region spends its configured share and never more. */
  STATIC("no transfers; each region spends its share"),
  /** A region below its low-water mark asks every reachable peer; each lends what it can spare. */
  PULL("low region asks all peers; each lends min(ask, headroom-floor, rate)"),
  /**
   * PULL with no floor: a lender gives all its headroom away. Shows what the floor costs and buys:
   * fewer calls refused while another region still holds headroom, but the lender's own later peak
   * then depends on loans coming back.
   */
  PULL_NO_FLOOR("PULL, lenders keep no floor"),
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

  /** Whether a low region asks its peers (PULL and its variant). */
  boolean pulls() {
    return this == PULL || this == PULL_NO_FLOOR;
  }

  /** The policies a default run compares (the broken one only on request). */
  static Policy[] compared() {
    return new Policy[] {GLOBAL, STATIC, PULL, PULL_NO_FLOOR, PUSH};
  }
}
