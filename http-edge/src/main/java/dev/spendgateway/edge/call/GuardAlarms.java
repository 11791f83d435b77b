package dev.spendgateway.edge.call;

import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import java.time.LocalDate;

/**
 * Where the guards' alarms go beyond the log and {@code /metrics}: the people who own a model or a
 * provider account should hear of a retired model, a deprecated one still in use, and an open
 * provider breaker without reading the gateway's logs (the alert webhook binds it). Every method
 * must be quick and must not throw: they are called on the call path.
 */
public interface GuardAlarms {

  /** {@code provider} answered 410 Gone for {@code model} on {@code route}; its circuit opened. */
  default void modelRetired(Provider provider, String model, String route) {}

  /** A call on {@code today} asked for {@code model}, deprecated or near its end of support. */
  default void modelDeprecatedInUse(ModelInfo model, LocalDate today) {}

  /** {@code provider}'s breaker opened: its calls are refused (or failed over) for a while. */
  default void circuitOpened(Provider provider) {}

  /** Tells nobody. */
  GuardAlarms NONE = new GuardAlarms() {};
}
