package dev.spendgateway.ledger;

import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * How this process reaches the ledger: the ref to send commands to (wrap it in a {@link
 * LedgerClient}) and whether the ledger answers right now ({@code /readyz}). In one process the
 * ledger is local and always reachable; on a cluster node it is the singleton, out of reach while
 * it moves between nodes.
 */
public record LedgerAccess(ActorRef<GlobalBudget.Command> ref, BooleanSupplier reachable) {}
