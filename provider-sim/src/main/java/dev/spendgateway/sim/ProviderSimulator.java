package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.TLSProtocol;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.TLSPlacebo;
import org.apache.pekko.stream.javadsl.Tcp;
import org.apache.pekko.util.ByteString;

/**
 * A fake OpenAI + Anthropic API on loopback, for tests, demos and load tests.
 *
 * <pre>{@code
 * try (ProviderSimulator sim = ProviderSimulator.start(SimConfig.defaults())) {
 *   sim.script(SimRoute.OPENAI_CHAT, Fault.rateLimited(2));
 *   // point a client at sim.baseUrl() …
 *   sim.received(SimRoute.OPENAI_CHAT);
 * }
 * }</pre>
 *
 * <p>It binds TCP itself and runs Pekko HTTP's server layer per connection (what {@code
 * Http.newServerAt(...).bind(...)} does inside), so that a scripted fault can reset the connection
 * before any response byte — something the routing layer cannot do.
 */
public final class ProviderSimulator implements AutoCloseable {
  private static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(15);

  /**
   * Connections waiting to be accepted. 4096 (the usual kernel cap, somaxconn): a capacity test
   * opens thousands of streams in a burst, and with a short backlog the surplus connects are
   * dropped and retried by the client's TCP a second later, which shows up as a false TTFB tail.
   */
  private static final int BACKLOG = 4096;

  private final ActorSystem<?> system;
  private final boolean ownsSystem;
  private final SimState state;
  private final Tcp.ServerBinding binding;
  private final SharedKillSwitch allConnections;
  private final String host;
  private final Route route;
  private final List<org.apache.pekko.http.javadsl.ServerBinding> h2cBindings =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  private ProviderSimulator(
      ActorSystem<?> system,
      boolean ownsSystem,
      SimState state,
      Tcp.ServerBinding binding,
      SharedKillSwitch allConnections,
      Route route) {
    this.system = system;
    this.route = route;
    this.ownsSystem = ownsSystem;
    this.state = state;
    this.binding = binding;
    this.allConnections = allConnections;
    this.host = state.config().host();
  }

  // ---------------- starting and stopping ----------------

  /** Starts on its own ActorSystem (stopped by {@link #close()}); blocks until bound. */
  public static ProviderSimulator start(SimConfig config) {
    ActorSystem<Void> own = ActorSystem.create(Behaviors.empty(), "provider-sim", ownConfig());
    try {
      return await(start(own, config, true), DEFAULT_START_TIMEOUT);
    } catch (RuntimeException e) {
      own.terminate();
      throw e;
    }
  }

  /** Starts on the given ActorSystem, which {@link #close()} leaves running. */
  public static CompletionStage<ProviderSimulator> start(ActorSystem<?> system, SimConfig config) {
    return start(system, config, false);
  }

  /** {@link #start(ActorSystem, SimConfig)}, waiting up to {@code timeout} for the bind. */
  public static ProviderSimulator startBlocking(
      ActorSystem<?> system, SimConfig config, Duration timeout) {
    return await(start(system, config, false), timeout);
  }

  private static CompletionStage<ProviderSimulator> start(
      ActorSystem<?> system, SimConfig config, boolean owns) {
    ObjectMapper mapper = new ObjectMapper();
    SimState state = new SimState(config);
    Responder responder = new Responder(system, mapper, config.replyText(), state.streams());
    Route route =
        new SimRoutes(
                new ProviderRoutes(state, responder, mapper, system),
                new AdminRoutes(state, mapper))
            .route();
    Flow<HttpRequest, HttpResponse, NotUsed> routeFlow = route.flow(system);
    ServerSettings settings = serverSettings(system);
    SharedKillSwitch all = KillSwitches.shared("provider-sim-connections");
    Materializer mat = Materializer.matFromSystem(system);
    return Tcp.get(system)
        .bind(config.host(), config.port(), BACKLOG, List.of(), false, Optional.empty())
        .to(Sink.foreach(connection -> serve(connection, routeFlow, settings, all, mat)))
        .run(mat)
        .thenApply(binding -> new ProviderSimulator(system, owns, state, binding, all, route));
  }

  /**
   * One connection: TCP bytes through Pekko HTTP's server layer into the route, with a kill switch.
   */
  private static void serve(
      Tcp.IncomingConnection connection,
      Flow<HttpRequest, HttpResponse, NotUsed> routeFlow,
      ServerSettings settings,
      SharedKillSwitch all,
      Materializer mat) {
    SharedKillSwitch own = KillSwitches.shared("provider-sim-connection");
    ConnectionControl control = () -> own.abort(new IOException("provider-sim: connection reset"));
    Flow<HttpRequest, HttpResponse, NotUsed> handler =
        Flow.of(HttpRequest.class)
            .map(r -> (HttpRequest) r.addAttribute(ConnectionControl.KEY, control))
            .via(routeFlow);
    Flow<ByteString, ByteString, NotUsed> http =
        handler.join(
            Http.get(mat.system())
                .serverLayer(settings, Optional.of(connection.remoteAddress()))
                .atop(placebo()));
    Flow<ByteString, ByteString, NotUsed> guarded =
        Flow.of(ByteString.class)
            .via(all.flow())
            .via(own.flow())
            .via(http)
            .via(own.flow())
            .via(all.flow());
    connection.handleWith(guarded, mat);
  }

  /** TLSPlacebo speaks SessionBytes, a subtype of SslTlsInbound that Java generics cannot widen. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static BidiFlow<
          TLSProtocol.SslTlsOutbound, ByteString, ByteString, TLSProtocol.SslTlsInbound, NotUsed>
      placebo() {
    return (BidiFlow) TLSPlacebo.getInstance();
  }

  private static ServerSettings serverSettings(ActorSystem<?> system) {
    return serverSettings(ServerSettings.create(system.classicSystem()));
  }

  private static ServerSettings serverSettings(ServerSettings base) {
    // Slow drips and long latencies are the point of some scripts: don't let Pekko answer 503
    // first.
    return base.withTimeouts(
            base.getTimeouts()
                .withRequestTimeout(
                    scala.concurrent.duration.Duration.create(10, TimeUnit.MINUTES)))
        .withParserSettings(
            base.getParserSettings().withMaxContentLength(ProviderRoutes.MAX_BODY_BYTES));
  }

  /**
   * Streams one HTTP/2 connection of the h2c listener carries at once: far above the 100 a client
   * needs to assume of any HTTP/2 server (the gateway's {@code http2-streams-per-connection}
   * default), so a burst is limited by the client, as against a provider that allows more.
   */
  static final int H2C_MAX_CONCURRENT_STREAMS = 1000;

  /**
   * Also serves the same API, state and scripts as HTTP/2 without TLS with prior knowledge (h2c) on
   * {@code port} of the same host (0: any free port), as a provider that speaks HTTP/2 does; the
   * gateway reaches it with {@code providers.<p>.http2 = prior-knowledge}. A scripted connection
   * reset is not available there (Pekko's HTTP/2 server runs its own connection pipeline): it ends
   * that one stream instead. Unbound by {@link #close()}.
   *
   * @return the h2c base URL, {@code http://HOST:PORT}
   */
  public CompletionStage<String> serveH2c(int port) {
    Config withStreams =
        ConfigFactory.parseMap(
                Map.of(
                    "pekko.http.server.http2.max-concurrent-streams", H2C_MAX_CONCURRENT_STREAMS))
            .withFallback(system.settings().config());
    ServerSettings h2 = serverSettings(ServerSettings.create(withStreams)).withEnableHttp2(true);
    return Http.get(system)
        .newServerAt(host, port)
        .withSettings(h2)
        .bind(route.handler(system))
        .thenApply(
            binding -> {
              h2cBindings.add(binding);
              return "http://" + hostForUrl() + ":" + binding.localAddress().getPort();
            });
  }

  /** Settings for a simulator's own ActorSystem: quiet, no banner, Slf4j logging. */
  private static Config ownConfig() {
    return ConfigFactory.parseMap(
            Map.of(
                "pekko.loggers", List.of("org.apache.pekko.event.slf4j.Slf4jLogger"),
                "pekko.logging-filter", "org.apache.pekko.event.slf4j.Slf4jLoggingFilter",
                "pekko.loglevel", "INFO",
                "pekko.stdout-loglevel", "OFF",
                "pekko.log-dead-letters", "off",
                // An accepted connection not handled within this is reset by Pekko (default 5 s). A
                // capacity run accepts thousands in a burst on saturated CPUs; a reset there would
                // look
                // like the gateway losing calls.
                "pekko.stream.materializer.subscription-timeout.timeout", "60s",
                "pekko.coordinated-shutdown.exit-jvm", "off"))
        .withFallback(ConfigFactory.load());
  }

  private static ProviderSimulator await(
      CompletionStage<ProviderSimulator> stage, Duration timeout) {
    try {
      return stage.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting the provider simulator", e);
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      throw new IllegalStateException(
          "provider simulator failed to start: " + cause.getMessage(), cause);
    }
  }

  /** Unbinds, drops open connections and, when it owns its ActorSystem, stops it. */
  public CompletionStage<Done> closeAsync() {
    CompletionStage<Done> unbound = binding.unbind().thenApply(u -> Done.getInstance());
    for (org.apache.pekko.http.javadsl.ServerBinding h2c : h2cBindings) {
      CompletionStage<Done> before = unbound;
      unbound =
          before.thenCompose(
              d -> h2c.terminate(Duration.ofSeconds(1)).thenApply(t -> Done.getInstance()));
    }
    return unbound.thenCompose(
        d -> {
          allConnections.abort(new IOException("provider-sim closed"));
          if (!ownsSystem) {
            return CompletableFuture.completedFuture(Done.getInstance());
          }
          system.terminate();
          return system.getWhenTerminated();
        });
  }

  @Override
  public void close() {
    try {
      closeAsync().toCompletableFuture().get(15, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      throw new IllegalStateException("provider simulator did not stop cleanly", e);
    }
  }

  // ---------------- where it is ----------------

  /**
   * {@code http://127.0.0.1:PORT} — both SDKs take it as their base URL (OpenAI adds {@code /v1}).
   */
  public String baseUrl() {
    return "http://" + hostForUrl() + ":" + port();
  }

  /** {@code baseUrl() + "/v1"}: what the OpenAI SDK expects as its base URL. */
  public String openAiBaseUrl() {
    return baseUrl() + "/v1";
  }

  public int port() {
    return binding.localAddress().getPort();
  }

  public InetSocketAddress address() {
    return binding.localAddress();
  }

  private String hostForUrl() {
    return host.contains(":") ? "[" + host + "]" : host;
  }

  // ---------------- scripting ----------------

  /** Queues each fault for one call on {@code route}, in order. */
  public ProviderSimulator script(SimRoute route, Fault... faults) {
    for (Fault f : faults) {
      state.script(route, f, 1);
    }
    return this;
  }

  /** Queues one fault that applies to the next {@code times} calls on {@code route}. */
  public ProviderSimulator scriptTimes(SimRoute route, Fault fault, int times) {
    state.script(route, fault, times);
    return this;
  }

  /** Queues a fault that applies to every later call on {@code route} until cleared or reset. */
  public ProviderSimulator scriptForever(SimRoute route, Fault fault) {
    state.script(route, fault, -1);
    return this;
  }

  /** Scripted steps still waiting on {@code route}. */
  public int pending(SimRoute route) {
    return state.pending(route);
  }

  public void clearScripts() {
    state.clearScripts();
  }

  /** Usage reported by calls with no scripted usage. */
  public void setDefaultUsage(Usage usage) {
    state.setDefaults(new SimState.Defaults(usage, state.defaults().latency()));
  }

  /** Delay before every answer. */
  public void setLatency(Duration latency) {
    if (latency.isNegative()) {
      throw new IllegalArgumentException("latency must be >= 0");
    }
    state.setDefaults(new SimState.Defaults(state.defaults().usage(), latency));
  }

  public Usage defaultUsage() {
    return state.defaults().usage();
  }

  /** Clears scripts and recordings and restores the configured defaults. */
  public void reset() {
    state.reset();
  }

  // ---------------- what it received ----------------

  /** The retained calls (the last {@code recordLimit}), oldest first. */
  public List<ReceivedCall> received() {
    return state.received();
  }

  public List<ReceivedCall> received(SimRoute route) {
    return state.received().stream().filter(c -> c.route() == route).toList();
  }

  public Optional<ReceivedCall> lastReceived(SimRoute route) {
    List<ReceivedCall> calls = received(route);
    return calls.isEmpty() ? Optional.empty() : Optional.of(calls.get(calls.size() - 1));
  }

  /** Calls seen since start or the last reset, including those no longer retained. */
  public long receivedCount() {
    return state.recorder().total();
  }

  public void clearReceived() {
    state.recorder().clear();
  }

  /** Lets every stream held by {@link Fault.StreamHold} go on to its end. */
  public void releaseHeld() {
    state.streams().releaseHeld();
  }

  /** Streamed answers being sent right now. */
  public int openStreams() {
    return state.streams().snapshot().open();
  }

  /**
   * Streams waiting at a {@link Fault.StreamHold} now: what to wait for before {@link
   * #releaseHeld()}, since a stream counted open may not have reached its hold yet.
   */
  public int heldStreams() {
    return state.streams().snapshot().held();
  }

  /** The most streamed answers open at once since start or the last {@link #reset()}. */
  public int peakOpenStreams() {
    return state.streams().snapshot().peak();
  }

  /** Streamed answers sent to their end since start or the last {@link #reset()}. */
  public long finishedStreams() {
    return state.streams().snapshot().finished();
  }

  /**
   * Streamed answers that ended early (cut, or the client went away) since start or the last reset.
   */
  public long cutStreams() {
    return state.streams().snapshot().cut();
  }

  public SimConfig config() {
    return state.config();
  }

  /**
   * How the next video jobs behave: queue and run times, whether they fail, the per-account limit
   * of unfinished jobs (the media provider's is 5) and the content size.
   */
  public void setMedia(
      Duration queueFor, Duration runFor, boolean fail, int maxConcurrent, long contentBytes) {
    MediaJobs.Settings s = state.media().settings();
    state
        .media()
        .settings(
            new MediaJobs.Settings(
                queueFor, runFor, fail, maxConcurrent, contentBytes, s.retryAfterSeconds()));
  }

  /**
   * Ends every unfinished video job now (completed, or failed if it was created to fail), so a test
   * can hold jobs open for as long as it needs and then let them complete at once.
   *
   * @return how many jobs were ended
   */
  public int finishMediaJobs() {
    return state.media().finishUnfinished();
  }

  /** Video jobs created so far (refused submits not counted). */
  public long mediaJobsCreated() {
    return state.media().created();
  }

  /** Submits refused because the account had its limit of unfinished jobs. */
  public long mediaJobsRefused() {
    return state.media().refused();
  }

  /** Unfinished (queued or running) jobs of the account with this API key. */
  public int mediaJobsUnfinished(String apiKey) {
    return state.media().unfinished(apiKey);
  }

  /** The composed route; package-private for tests that drive it without a socket. */
  static final class SimRoutes extends AllDirectives {
    private final ProviderRoutes provider;
    private final AdminRoutes admin;

    SimRoutes(ProviderRoutes provider, AdminRoutes admin) {
      this.provider = provider;
      this.admin = admin;
    }

    Route route() {
      return concat(provider.route(), admin.route(), extractRequest(r -> complete(notFound(r))));
    }

    /** Unknown paths answer like OpenAI does, since both providers share {@code /v1}. */
    private static HttpResponse notFound(HttpRequest r) {
      String message = "Invalid URL (" + r.method().value() + " " + r.getUri().path() + ")";
      return HttpResponse.create()
          .withStatus(404)
          .withEntity(
              org.apache.pekko.http.javadsl.model.ContentTypes.APPLICATION_JSON,
              OpenAiWire.error(404, message, null).toString());
    }
  }
}
