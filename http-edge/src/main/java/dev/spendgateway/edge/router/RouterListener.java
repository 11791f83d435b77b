package dev.spendgateway.edge.router;

import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.Pool;
import java.util.Optional;

/**
 * What the failover router and the guards every provider call passes tell the outside world, for
 * metrics and alarms ({@code /metrics} binds it to Micrometer). Every method must be quick and must
 * not throw; the defaults do nothing.
 */
public interface RouterListener extends ProviderGuards.Listener {

  /**
   * A 410 opened {@code model}'s circuit ({@code gateway_model_retired{model}}); once per opening.
   */
  default void modelRetired(String model) {}

  /** A profile model is deprecated ({@code gateway_model_end_of_support_days{profile,model}}). */
  default void modelDeprecated(String profile, String model, Optional<Long> daysLeft) {}

  /** One upstream attempt finished ({@code gateway_router_attempts{provider,outcome}}). */
  default void attempt(Provider provider, String outcome) {}

  /** A call switched to the fallback ({@code gateway_router_failovers{profile}}). */
  default void failover(String profile, Provider to) {}

  /** A call was refused at admission ({@code gateway_router_pool_full{pool,provider}}). */
  default void poolFull(Pool pool, Provider provider) {}

  /**
   * A call refused by a provider's rate limit (its turn was further away than the maximum wait).
   */
  default void rateLimited(Provider provider) {}

  /**
   * A call dropped unsent because its caller hung up while it waited ({@code
   * gateway_callers_gone_total{provider,wait}}; {@code wait} = {@code queue}, {@code pace}, {@code
   * before} or {@code reserve}).
   */
  default void callerGone(Provider provider, String wait) {}

  /** Listens to nothing. */
  RouterListener NONE = new RouterListener() {};
}
