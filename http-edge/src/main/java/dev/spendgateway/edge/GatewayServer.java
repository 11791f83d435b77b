package dev.spendgateway.edge;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import dev.spendgateway.edge.provider.InFlightCalls;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds the gateway's route and ties its life to CoordinatedShutdown: on shutdown it first stops
 * accepting connections, then lets in-flight calls (open streams included) finish within the drain
 * time, so their reservations are settled before the ledger stops.
 */
public final class GatewayServer {
  private static final Logger log = LoggerFactory.getLogger(GatewayServer.class);

  private GatewayServer() {}

  /** How long a new connection may take to send its first request line and headers. */
  static final String HEADER_READ_TIMEOUT = "gateway.header-read-timeout";

  /** The shutdown phase the drain runs in; Pekko cuts its tasks after this timeout. */
  static final String DRAIN_PHASE_TIMEOUT =
      "pekko.coordinated-shutdown.phases.service-requests-done.timeout";

  /**
   * What the drain phase needs beyond {@code gateway.shutdown-drain}: the pause that lets the last
   * answers' final chunks out ({@link #FLUSH}), closing the connections, and room for a loaded
   * machine.
   */
  static final Duration DRAIN_PHASE_MARGIN = Duration.ofSeconds(5);

  /**
   * {@code config} with a drain phase long enough for {@code gateway.shutdown-drain}: its timeout
   * becomes the drain plus {@link #DRAIN_PHASE_MARGIN} unless the config already gives it longer.
   * Derived here from the one key, so a longer drain never needs a second, hand-computed setting
   * (Pekko's default phase timeout, 5s, would cut open streams long before a 20s drain is up). A
   * drain that is not a duration is left for the start's check to report.
   */
  static Config withDrainPhase(Config config) {
    Duration needed;
    try {
      needed = config.getDuration("gateway.shutdown-drain").plus(DRAIN_PHASE_MARGIN);
      if (config.hasPath(DRAIN_PHASE_TIMEOUT)
          && config.getDuration(DRAIN_PHASE_TIMEOUT).compareTo(needed) >= 0) {
        return config;
      }
    } catch (ConfigException notADuration) {
      return config;
    }
    return ConfigFactory.parseMap(Map.of(DRAIN_PHASE_TIMEOUT, needed.toMillis() + "ms"))
        .withFallback(config);
  }

  public static CompletionStage<ServerBinding> bind(
      ActorSystem<?> system, GatewaySettings settings, Route route, InFlightCalls inFlight) {
    return Http.get(system)
        .newServerAt(settings.host(), settings.port())
        .bindFlow(headsInTime(system).join(route.flow(system)))
        .thenApply(binding -> registerShutdown(system, binding, settings.shutdownDrain(), inFlight));
  }

  /**
   * Every connection's request heads bounded in time (see {@link HeaderReadTimeout}): the first
   * within {@code gateway.header-read-timeout}, each later one within the server's idle timeout.
   */
  private static BidiFlow<HttpRequest, HttpRequest, HttpResponse, HttpResponse, NotUsed> headsInTime(ActorSystem<?> system) {
    Duration firstHead = system.settings().config().getDuration(HEADER_READ_TIMEOUT);
    scala.concurrent.duration.Duration idle = ServerSettings.create(system.settings().config()).getTimeouts().idleTimeout();
    Duration nextHead = idle.isFinite() ? Duration.ofNanos(idle.toNanos()) : null;
    return HeaderReadTimeout.bidi(firstHead, nextHead);
  }

  /**
   * The settlement wait ends this long before its shutdown phase's own timeout, so the wait itself
   * says how many settles were left (Pekko would cut the task silently).
   */
  private static final Duration BEFORE_PHASE_TIMEOUT = Duration.ofSeconds(1);

  /**
   * After the last answer's entity has been handed to its connection, the renderer still has to
   * write the final chunk; the connections are closed only after this pause.
   */
  private static final Duration FLUSH = Duration.ofMillis(200);

  private static ServerBinding registerShutdown(
      ActorSystem<?> system, ServerBinding binding, Duration drain, InFlightCalls inFlight) {
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceUnbind(),
        "gateway-unbind",
        () -> {
          log.info("shutting down: no longer accepting connections on {}", binding.localAddress());
          return binding.unbind().thenApply(ignored -> Done.getInstance());
        });
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceRequestsDone(),
        "gateway-drain",
        () -> {
          int waiting = inFlight.openAnswers();
          log.info("shutting down: waiting up to {} for {} in-flight answers (open streams included)", drain, waiting);
          long deadline = System.nanoTime() + drain.toNanos();
          return inFlight
              .awaitAnswers(drain)
              .thenCompose(open -> {
                if (open > 0) {
                  log.warn("shutting down with {} answers still open after {}; they are cut", open, drain);
                }
                return waiting > 0 ? pause(FLUSH) : CompletableFuture.completedFuture(null);
              })
              .thenCompose(flushed -> {
                Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
                return binding.terminate(left.isZero() ? Duration.ofMillis(1) : left);
              })
              .thenApply(ignored -> Done.getInstance());
        });
    // Settles still unanswered when the service-stop phase is nearly over are left to expire at
    // their worst case; the phase's timeout (pekko.coordinated-shutdown) is the one setting.
    Duration settlementDrain = Duration.ofNanos(Math.max(0,
        shutdown.timeout(CoordinatedShutdown.PhaseServiceStop()).toNanos()
            - BEFORE_PHASE_TIMEOUT.toNanos()));
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceStop(),
        "gateway-settlements",
        () ->
            inFlight
                .awaitSettlements(settlementDrain)
                .thenApply(
                    left -> {
                      if (left > 0) {
                        log.warn("shutting down with {} settlements unanswered; they expire at their worst case", left);
                      }
                      return Done.getInstance();
                    }));
    return binding;
  }

  private static CompletionStage<Void> pause(Duration d) {
    return CompletableFuture.runAsync(() -> {}, CompletableFuture.delayedExecutor(d.toMillis(), TimeUnit.MILLISECONDS));
  }
}
