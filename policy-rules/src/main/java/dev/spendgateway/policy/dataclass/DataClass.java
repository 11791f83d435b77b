package dev.spendgateway.policy.dataclass;

import dev.spendgateway.policy.catalog.Provider;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One kind of data a request may carry ({@code x-data-class}) and the providers allowed to receive
 * it. A contract with a provider (retention, region, training use) is what makes it safe for a kind
 * of data, so the list is an allow-list: a provider nobody approved for the class never sees it.
 *
 * @param name the class name as callers send it and the access log records it
 * @param providers the providers this class may go to; never empty
 */
public record DataClass(String name, Set<Provider> providers) {
  public DataClass {
    Objects.requireNonNull(name, "name");
    if (providers.isEmpty()) {
      throw new IllegalArgumentException(
          "data class '" + name + "' must allow at least one provider");
    }
    providers = Set.copyOf(providers);
  }

  public boolean allows(Provider provider) {
    return providers.contains(provider);
  }

  /**
   * The providers a call of this class may use on a routing profile that narrows the class further
   * ({@code narrowing} present: only providers in both lists). A profile can only take providers
   * away, never add one the class does not allow.
   */
  public Set<Provider> narrowedTo(Optional<Set<Provider>> narrowing) {
    if (narrowing.isEmpty()) {
      return providers;
    }
    Set<Provider> both = EnumSet.noneOf(Provider.class);
    for (Provider p : providers) {
      if (narrowing.get().contains(p)) {
        both.add(p);
      }
    }
    return Set.copyOf(both);
  }
}
