package dev.spendgateway.edge;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.call.InFlightCalls;
import dev.spendgateway.edge.connection.CallerConnection;
import dev.spendgateway.edge.connection.HeaderReadTimeout;
import dev.spendgateway.edge.errors.GatewayErrors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.Connection;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.javadsl.BidiFlow;
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
    CompletionStage<ServerBinding> http1 =
        Http.get(system)
            .newServerAt(settings.host(), settings.port())
            .bindFlow(headsInTime(system).atop(CallerConnection.bidi()).join(route.flow(system)));
    return http1.thenCompose(
        main ->
            bindH2c(system, settings, route)
                .handle(
                    (h2c, failure) -> {
                      if (failure != null) {
                        main.unbind(); // the start fails as a whole: no half-bound gateway
                        throw new java.util.concurrent.CompletionException(failure);
                      }
                      List<ServerBinding> all = new ArrayList<>(List.of(main));
                      h2c.ifPresent(all::add);
                      registerShutdown(system, all, settings.shutdownDrain(), inFlight);
                      return main;
                    }));
  }

  /**
   * The HTTP/2 cleartext listener ({@code gateway.http2-port}, off at 0): HTTP/2 with prior
   * knowledge, as a load balancer in front of the gateway speaks it, many callers' streams
   * multiplexed on a few connections, so an open call costs the gateway one socket (the provider's)
   * instead of two. A listener of its own because the HTTP/1.1 port's {@link HeaderReadTimeout}
   * needs a per-connection flow, which Pekko's HTTP/2 server does not take; see {@link #h2cOnly}
   * for what this port answers an HTTP/1.1 request.
   */
  private static CompletionStage<Optional<ServerBinding>> bindH2c(
      ActorSystem<?> system, GatewaySettings settings, Route route) {
    if (settings.http2Port() <= 0) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    Config config = system.settings().config();
    ServerSettings h2 =
        ServerSettings.create(config)
            .withEnableHttp2(true)
            .withMaxConnections(GatewayKeys.HTTP2_MAX_CONNECTIONS.get(config));
    return Http.get(system)
        .newServerAt(settings.host(), settings.http2Port())
        .withSettings(h2)
        .bind(h2cOnly(route.handler(system), settings.port()))
        .thenApply(
            binding -> {
              log.info(
                  "gateway listening for HTTP/2 (h2c, prior knowledge) on {}",
                  binding.localAddress());
              return Optional.of(binding);
            });
  }

  /** How many connections the HTTP/2 listener accepts at once. */
  static final String HTTP2_MAX_CONNECTIONS = "gateway.http2-max-connections";

  /**
   * The route for HTTP/2 requests; an HTTP/1.x request on the HTTP/2 port is answered 505 and its
   * connection closed. Pekko would serve it, but without the header-read timeout that guards the
   * HTTP/1.1 port against slowly sent heads: HTTP/1.1 callers belong on {@code gateway.port}.
   */
  private static Function<HttpRequest, CompletionStage<HttpResponse>> h2cOnly(
      Function<HttpRequest, CompletionStage<HttpResponse>> handler, int http1Port) {
    return request -> {
      if (!request.protocol().value().startsWith("HTTP/1")) {
        return handler.apply(request);
      }
      HttpResponse refused =
          GatewayErrors.error(
              GatewayErrors.Shape.GATEWAY,
              505,
              "http_version_not_supported",
              "this port speaks HTTP/2 with prior knowledge (h2c) only; send HTTP/1.1 to port "
                  + http1Port);
      return CompletableFuture.completedFuture(refused.addHeader(Connection.create("close")));
    };
  }

  /**
   * Every connection's request heads bounded in time (see {@link HeaderReadTimeout}): the first
   * within {@code gateway.header-read-timeout}, each later one within the server's idle timeout.
   */
  private static BidiFlow<HttpRequest, HttpRequest, HttpResponse, HttpResponse, NotUsed>
      headsInTime(ActorSystem<?> system) {
    Duration firstHead = GatewayKeys.HEADER_READ_TIMEOUT.get(system.settings().config());
    scala.concurrent.duration.Duration idle =
        ServerSettings.create(system.settings().config()).getTimeouts().idleTimeout();
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

  private static void registerShutdown(
      ActorSystem<?> system, List<ServerBinding> bindings, Duration drain, InFlightCalls inFlight) {
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceUnbind(),
        "gateway-unbind",
        () -> {
          CompletableFuture<?>[] unbound =
              bindings.stream()
                  .map(
                      binding -> {
                        log.info(
                            "shutting down: no longer accepting connections on {}",
                            binding.localAddress());
                        return binding.unbind().toCompletableFuture();
                      })
                  .toArray(CompletableFuture[]::new);
          return CompletableFuture.allOf(unbound).thenApply(ignored -> Done.getInstance());
        });
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceRequestsDone(),
        "gateway-drain",
        () -> {
          int waiting = inFlight.openAnswers();
          log.info(
              "shutting down: waiting up to {} for {} in-flight answers (open streams included)",
              drain,
              waiting);
          long deadline = System.nanoTime() + drain.toNanos();
          return inFlight
              .awaitAnswers(drain)
              .thenCompose(
                  open -> {
                    if (open > 0) {
                      log.warn(
                          "shutting down with {} answers still open after {}; they are cut",
                          open,
                          drain);
                    }
                    return waiting > 0 ? pause(FLUSH) : CompletableFuture.completedFuture(null);
                  })
              .thenCompose(
                  flushed -> {
                    Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
                    Duration grace = left.isZero() ? Duration.ofMillis(1) : left;
                    return CompletableFuture.allOf(
                        bindings.stream()
                            .map(binding -> binding.terminate(grace).toCompletableFuture())
                            .toArray(CompletableFuture[]::new));
                  })
              .thenApply(ignored -> Done.getInstance());
        });
    // Settles still unanswered when the service-stop phase is nearly over are left to expire at
    // their worst case; the phase's timeout (pekko.coordinated-shutdown) is the one setting.
    Duration settlementDrain =
        Duration.ofNanos(
            Math.max(
                0,
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
                        log.warn(
                            "shutting down with {} settlements unanswered; they expire at their worst case",
                            left);
                      }
                      return Done.getInstance();
                    }));
  }

  private static CompletionStage<Void> pause(Duration d) {
    return CompletableFuture.runAsync(
        () -> {}, CompletableFuture.delayedExecutor(d.toMillis(), TimeUnit.MILLISECONDS));
  }
}
