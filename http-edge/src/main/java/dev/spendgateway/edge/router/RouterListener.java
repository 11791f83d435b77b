package dev.spendgateway.edge.router;

import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.Pool;
import java.util.Optional;

/**
 * What the failover router and the guards every provider call passes tell the outside world, for
 * metrics and alarms ({@code /metrics} binds it to Micrometer). Every method must be quick and must
 * not throw; the defaults do nothing. {@code profile} is the call's routing profile (empty on a
 * provider route): every routing series carries it, so an operator sees which profile's calls
 * failed over, were refused or waited.
 */
public interface RouterListener extends ProviderGuards.Listener {

  /**
   * A 410 opened {@code model}'s circuit ({@code gateway_model_retired{model}}); once per opening.
   */
  default void modelRetired(String model) {}

  /** A profile model is deprecated ({@code gateway_model_end_of_support_days{profile,model}}). */
  default void modelDeprecated(String profile, String model, Optional<Long> daysLeft) {}

  /** One upstream attempt finished ({@code gateway_router_attempts{provider,profile,outcome}}). */
  default void attempt(Provider provider, String profile, String outcome) {}

  /** A call switched to the fallback ({@code gateway_router_failovers{profile,to}}). */
  default void failover(String profile, Provider to) {}

  /** A call was refused at admission ({@code gateway_router_pool_full{pool,provider,profile}}). */
  @Override
  default void poolFull(Pool pool, Provider provider, String profile) {}

  /**
   * A call refused by a provider's rate limit (its turn was further away than the maximum wait):
   * {@code gateway_rate_limited{provider,profile}}.
   */
  @Override
  default void rateLimited(Provider provider, String profile) {}

  /**
   * A call dropped unsent because its caller hung up while it waited ({@code
   * gateway_callers_gone_total{provider,wait,profile}}; {@code wait} = {@code queue}, {@code pace},
   * {@code before} or {@code reserve}).
   */
  @Override
  default void callerGone(Provider provider, String wait, String profile) {}

  /** Listens to nothing. */
  RouterListener NONE = new RouterListener() {};
}
