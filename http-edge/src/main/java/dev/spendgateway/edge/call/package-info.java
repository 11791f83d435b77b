/**
 * The call core: the one lifecycle every provider attempt goes through, whether it is a
 * pass-through call's only attempt or one of the failover router's.
 *
 * <ol>
 *   <li>{@link dev.spendgateway.edge.call.CallCore#reserve} holds the worst case (answered only
 *       once the ledger's event is durable) and hands back a {@link
 *       dev.spendgateway.edge.call.CallAttempt}, or a {@link
 *       dev.spendgateway.edge.call.BudgetRefusal} in the caller's error shape. A reserve the ledger
 *       did not answer is voided by the id the gateway sent.
 *   <li>{@link dev.spendgateway.edge.call.UpstreamExchange#send} sends the request (through the
 *       router's breaker, or no guard on a pass-through route), records the upstream metrics, reads
 *       a whole answer or meters a stream, maps what happened to an {@link
 *       dev.spendgateway.edge.call.UpstreamOutcome} and ends the attempt ({@link
 *       dev.spendgateway.edge.call.CallAttempt#end}, once; later ends are ignored). The route only
 *       decides what the caller gets: pass the answer through, translate it, or fail over.
 *   <li>{@link dev.spendgateway.edge.call.Settlement#decide} (pure) says how the reservation closes
 *       and the line's word; {@link dev.spendgateway.edge.call.HeldReservation} closes it exactly
 *       once, asking again while the ledger does not answer; the attempt's line is written when the
 *       ledger has answered, saying what it did ({@link dev.spendgateway.edge.call.LedgerClose}).
 * </ol>
 *
 * <p>A call that ends without an attempt (refused before reserving, or a gateway-made answer after
 * failed attempts) writes its own line through {@link dev.spendgateway.edge.call.CallLine}.
 */
package dev.spendgateway.edge.call;
