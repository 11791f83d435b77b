package dev.spendgateway.edge.ops;

import java.util.concurrent.CompletionStage;

/**
 * Answers whether the gateway can take calls: true once the ledger has recovered from its journal.
 * The ledger implements it by asking the GlobalBudget actor, which only answers after recovery.
 */
@FunctionalInterface
public interface Readiness {
  CompletionStage<Boolean> isReady();
}
