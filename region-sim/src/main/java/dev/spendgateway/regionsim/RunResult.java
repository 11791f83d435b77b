package dev.spendgateway.regionsim;

/**
 * What one run of one policy on one seed counted.
 *
 * @param refusedByCap refused by the region's allowance (or, for GLOBAL, by the cap)
 * @param stranded of those, refused while the company-wide cap still had room for the call: one
 *     global ledger holding these very books would have admitted it
 * @param peerHadRoom of those, refused while one other region alone had headroom for the call
 * @param refusedDown refused because the region's ledger was down (crashed, recovering)
 * @param overshootMicros most any global cap window was ever exceeded by, over all regions (must be
 *     0)
 * @param firstDayUnusedMicros what the first (whole) day's company-wide cap left unspent at the end
 * @param violation the first broken invariant, or {@code null}
 * @param trace the run's event trace (only when tracing was asked for), ending at the violation
 */
record RunResult(
    long seed,
    Policy policy,
    int regions,
    int calls,
    int admitted,
    int refusedByCap,
    int stranded,
    int peerHadRoom,
    int refusedDown,
    int transfers,
    long movedMicros,
    int crashes,
    long overshootMicros,
    long firstDayUnusedMicros,
    String violation,
    String trace) {

  boolean violated() {
    return violation != null;
  }
}
