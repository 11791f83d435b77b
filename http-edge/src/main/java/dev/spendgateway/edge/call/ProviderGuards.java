package dev.spendgateway.edge.call;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.AdmissionPools.Permit;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.failover.PoolFull;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What protects the providers and the node, shared by every provider call — the pass-through routes
 * and each router attempt alike — so a caller cannot get past a limit by picking a route: the
 * interactive/batch admission pools ({@code x-priority}), the node's pace towards each provider
 * (requests and tokens per minute), one breaker per provider, and the model circuits a 410 Gone
 * opens.
 *
 * @param breakerRetryAfter what a call refused by an open breaker is told to wait (the breaker's
 *     reset timeout: it half-opens then)
 * @param delay completes after a wait without holding a thread (a rate limit's turn)
 * @param listener told of every refusal (for {@code /metrics})
 * @param alarms told of a retired model, a deprecated one in use and an open breaker (the alert
 *     webhook)
 */
public record ProviderGuards(
    AdmissionPools pools,
    ProviderRateLimits rateLimits,
    ProviderBreakers breakers,
    ModelCircuits circuits,
    Duration breakerRetryAfter,
    Function<Duration, CompletionStage<Void>> delay,
    Listener listener,
    GuardAlarms alarms) {
  private static final Logger log = LoggerFactory.getLogger(ProviderGuards.class);

  /**
   * Counts the guards' refusals; {@code profile} is the routing profile of the call refused (empty
   * on a provider route), so a metric says whose calls a limit turned away.
   */
  public interface Listener {
    void poolFull(Pool pool, Provider provider, String profile);

    void rateLimited(Provider provider, String profile);

    /**
     * A call dropped unsent because its caller hung up while it waited: {@code wait} is {@code
     * queue} (its pool's queue), {@code pace} (its turn under the rate limits), {@code before}
     * (gone by the time it reached the guards) or {@code reserve} (gone by the time the ledger held
     * its worst case, which is released at once; counted by the routes).
     */
    void callerGone(Provider provider, String wait, String profile);
  }

  /** What the guards decided for one provider call, before it may hold money. */
  public sealed interface Clearance {
    /** It may reserve and go; {@code permit} is its pool slot, to close when the call ends. */
    record Cleared(Permit permit) implements Clearance {}

    /** The node's pace: its turn is further away than the limits' maximum wait. */
    record RateLimited(ProviderRateLimits.Turn.Refused refused) implements Clearance {}

    /** Its pool's queue is full. */
    record PoolRefused(PoolFull full) implements Clearance {}

    /**
     * Its caller hung up during {@code during} ({@code queue}, {@code pace} or {@code before}, as
     * counted), {@code when} in words for the log: nothing is taken any more (the pace's share
     * given back, the place in the queue skipped), nothing reserved or sent.
     */
    record CallerGone(String during, String when) implements Clearance {}
  }

  /**
   * The pace's turn, then a slot in {@code pool}: both may wait (up to the limits' maximum wait,
   * and as long as the queue ahead takes), and a caller may hang up meanwhile. Pekko HTTP runs a
   * route on after its caller has gone, so without {@code callerGone} a call queued behind
   * minutes-long streams would go out, and be billed, for nobody, and an SDK that timed out and
   * retried would have it sent twice. {@code callerGone} completes when the caller's connection
   * ends; empty where that is not known (the call then waits as before). {@code profile} only
   * labels what the listener is told.
   */
  public CompletionStage<Clearance> clear(
      Provider provider,
      long worstCaseTokens,
      Pool pool,
      String profile,
      Optional<? extends CompletionStage<?>> callerGone) {
    if (isDone(callerGone)) {
      return CompletableFuture.completedFuture(
          gone(provider, profile, "before", "before its call was sent"));
    }
    return paced(provider, worstCaseTokens, pool, profile, callerGone, Duration.ZERO);
  }

  /**
   * The pace's turn, then the pool. A batch call told {@link ProviderRateLimits.Turn.NotYet} (only
   * the interactive reserve is left) waits holding nothing and asks again, for at most the limits'
   * maximum wait in all ({@code waited} so far), and is then refused like any call whose turn is
   * too far away.
   */
  private CompletionStage<Clearance> paced(
      Provider provider,
      long worstCaseTokens,
      Pool pool,
      String profile,
      Optional<? extends CompletionStage<?>> callerGone,
      Duration waited) {
    ProviderRateLimits.Turn turn = rateLimits.take(provider, pool, worstCaseTokens);
    if (turn instanceof ProviderRateLimits.Turn.NotYet notYet) {
      Duration total = waited.plus(notYet.retryIn());
      if (total.compareTo(rateLimits.maxWait()) > 0) {
        turn = new ProviderRateLimits.Turn.Refused(notYet.retryIn(), notYet.limit());
      } else {
        return waitedOut(notYet.retryIn(), callerGone)
            .thenCompose(
                stayed ->
                    stayed && !isDone(callerGone)
                        ? paced(provider, worstCaseTokens, pool, profile, callerGone, total)
                        : CompletableFuture.completedFuture(
                            gone(
                                provider,
                                profile,
                                "pace",
                                "while waiting "
                                    + total.toMillis()
                                    + " ms for the share of the node's "
                                    + provider.wireName()
                                    + " rate limits above the interactive reserve")));
      }
    }
    if (turn instanceof ProviderRateLimits.Turn.Refused refused) {
      listener.rateLimited(provider, profile);
      return CompletableFuture.completedFuture(new Clearance.RateLimited(refused));
    }
    Duration wait = ((ProviderRateLimits.Turn.Go) turn).after();
    CompletionStage<Boolean> turnCame =
        wait.isZero() ? CompletableFuture.completedFuture(true) : waitedOut(wait, callerGone);
    return turnCame.thenCompose(
        came -> {
          if (!came || isDone(callerGone)) {
            rateLimits.giveBack(provider, pool, worstCaseTokens);
            return CompletableFuture.completedFuture(
                gone(
                    provider,
                    profile,
                    "pace",
                    "while waiting "
                        + wait.toMillis()
                        + " ms for its turn under the node's "
                        + provider.wireName()
                        + " rate limits"));
          }
          return admitted(provider, worstCaseTokens, pool, profile, callerGone);
        });
  }

  /**
   * A slot in {@code pool}; a queued call whose caller hangs up gives its place up, and the pace's
   * share it took (it will not be sent).
   */
  private CompletionStage<Clearance> admitted(
      Provider provider,
      long worstCaseTokens,
      Pool pool,
      String profile,
      Optional<? extends CompletionStage<?>> callerGone) {
    CompletableFuture<Permit> waiting = pools.admit(pool, provider).toCompletableFuture();
    if (!waiting.isDone()) {
      callerGone.ifPresent(gone -> gone.thenRun(() -> waiting.cancel(false)));
    }
    String queued =
        "while queued in the "
            + pool.wireName()
            + " pool for a slot towards "
            + provider.wireName();
    return waiting.handle(
        (permit, failure) -> {
          if (failure == null) {
            if (isDone(callerGone)) {
              permit.close(); // the slot goes to the next in line
              rateLimits.giveBack(provider, pool, worstCaseTokens);
              return gone(provider, profile, "queue", queued);
            }
            return new Clearance.Cleared(permit);
          }
          Throwable cause =
              failure instanceof CompletionException && failure.getCause() != null
                  ? failure.getCause()
                  : failure;
          if (cause instanceof CancellationException) {
            rateLimits.giveBack(provider, pool, worstCaseTokens);
            return gone(provider, profile, "queue", queued);
          }
          if (cause instanceof PoolFull full) {
            return new Clearance.PoolRefused(full);
          }
          throw new CompletionException(cause);
        });
  }

  private Clearance gone(Provider provider, String profile, String wait, String when) {
    listener.callerGone(provider, wait, profile);
    return new Clearance.CallerGone(wait, when);
  }

  /**
   * Completes with true after {@code wait}, or with false as soon as the caller's connection ends
   * ({@code callerGone}), if that comes first; without a signal the whole wait is waited. The
   * pace's turn here and the router's retry-after wait both use it.
   */
  public CompletionStage<Boolean> waitedOut(
      Duration wait, Optional<? extends CompletionStage<?>> callerGone) {
    CompletableFuture<Boolean> came = new CompletableFuture<>();
    delay.apply(wait).thenRun(() -> came.complete(true));
    callerGone.ifPresent(gone -> gone.thenRun(() -> came.complete(false)));
    return came;
  }

  private static boolean isDone(Optional<? extends CompletionStage<?>> callerGone) {
    return callerGone.map(gone -> gone.toCompletableFuture().isDone()).orElse(false);
  }

  /**
   * A provider answered 410 Gone for {@code model} on {@code route}: opens its circuit and, the
   * first time, raises the alarm ({@code then}: what happens to the calls to it meanwhile, naming
   * the routing profile on the router), so whoever reads it knows which callers are affected.
   */
  public void modelGone(Provider provider, String model, String route, String then) {
    if (circuits.onModelGone(model)) {
      log.error(
          "ALARM model retired: {} answered 410 Gone for model '{}' on route {}; its circuit is"
              + " open, {}",
          provider.wireName(),
          model,
          route,
          then);
      alarms.modelRetired(provider, model, route);
    }
  }

  /** Whole seconds a refused call is told to wait (at least 1). */
  public static long retryAfterSeconds(Duration wait) {
    return Math.max(1, (wait.toMillis() + 999) / 1000);
  }

  /** The breakers as an exchange's guard (timing only to the response headers). */
  public UpstreamExchange.Guard breaker() {
    return new UpstreamExchange.Guard() {
      @Override
      public boolean allows(Provider provider) {
        return breakers.isCallAllowed(provider);
      }

      @Override
      public <T> CompletionStage<T> around(
          Provider provider, Supplier<CompletionStage<T>> call, Predicate<T> isFailure) {
        return breakers.withBreaker(provider, call, isFailure);
      }

      @Override
      public void streamCut(Provider provider) {
        breakers.onFailure(provider);
      }
    };
  }
}
