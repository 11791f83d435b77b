package dev.spendgateway.upstream.client;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.ClientTransport;
import org.apache.pekko.http.javadsl.ConnectHttp;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.http.javadsl.settings.ClientConnectionSettings;
import org.apache.pekko.http.javadsl.settings.ConnectionPoolSettings;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SharedKillSwitch;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's HTTP client to the providers: one Pekko HTTP host connection pool per provider (via
 * {@code Http.singleRequest} with that provider's {@link ConnectionPoolSettings}), TLS for https
 * base URLs, plain HTTP for http ones (the simulator on loopback).
 *
 * <p>Each call swaps the credentials ({@link HeaderPolicy}): the caller's gateway token and every
 * other credential stay home, the real key is added. Bodies stream in both directions; the response
 * body is handed back unread, decoded if the provider compressed it although asked not to ({@link
 * UpstreamEncoding}), so the caller and the usage tap read the same plain bytes. Pools never retry
 * (max-retries 0: POST is not idempotent, and retries belong to the failover router with its
 * budget).
 *
 * <p>Two exceptions to "never retry", both provably free: a request whose connection was refused or
 * whose TLS handshake failed never left the gateway, so it is sent once more when its body is in
 * memory ({@link UpstreamBody.Strict}; a streamed upload cannot be replayed).
 *
 * <p>Timers: the response headers must come within {@code response-start-timeout}; a silent
 * connection is closed after {@code idle-timeout}; the whole call, body included, is cut at {@code
 * providers.max-call-duration} (the body fails with {@link MaxCallDurationExceeded}), so it ends
 * before the ledger would expire its reservation. A pooled connection unused for {@code
 * keep-alive-timeout} is closed rather than reused after the provider dropped it.
 *
 * <p>With {@code http2} on for a provider, its calls are HTTP/2 streams on a few connections
 * ({@link Http2Connections}) instead of one pooled HTTP/1.1 connection each; the same slots, timers
 * and cuts apply, and a silent stream gets its own idle timer since its connection stays busy with
 * other streams.
 *
 * <p>Thread-safe; create one per actor system: {@code UpstreamClient.create(system, settings)}.
 */
public final class UpstreamClient {

  private static final Logger LOG = LoggerFactory.getLogger(UpstreamClient.class);

  private final ActorSystem<?> system;
  private final UpstreamSettings settings;
  private final Http http;
  private final Materializer materializer;
  private final LoggingAdapter poolLog;
  private final Map<Provider, Pool> pools = new EnumMap<>(Provider.class);
  private final Optional<ClientTransport> transport;

  private UpstreamClient(
      ActorSystem<?> system, UpstreamSettings settings, Optional<ClientTransport> transport) {
    this.system = system;
    this.settings = settings;
    this.http = Http.get(system);
    this.materializer = Materializer.matFromSystem(system);
    this.poolLog = system.classicSystem().log();
    this.transport = transport;
    for (Provider provider : Provider.values()) {
      pools.put(provider, pool(settings.provider(provider)));
    }
  }

  public static UpstreamClient create(ActorSystem<?> system, UpstreamSettings settings) {
    return new UpstreamClient(system, settings, Optional.empty());
  }

  /** With another way to open connections (tests: a connect refused on purpose). */
  static UpstreamClient create(
      ActorSystem<?> system, UpstreamSettings settings, ClientTransport transport) {
    return new UpstreamClient(system, settings, Optional.of(transport));
  }

  public UpstreamSettings settings() {
    return settings;
  }

  /**
   * Sends {@code request} to {@code provider}'s base URL + {@code path}.
   *
   * @param path the upstream path, with query if any, e.g. {@code /v1/messages} or {@code
   *     /v1/messages?beta=true}
   * @return never fails: {@link UpstreamResult.Responded} for any HTTP status, {@link
   *     UpstreamResult.ConnectionFailed} when no response started within {@code
   *     response-start-timeout} or the connection failed
   */
  public CompletionStage<UpstreamResult> call(
      Provider provider, String path, UpstreamRequest request) {
    if (!path.startsWith("/")) {
      throw new IllegalArgumentException("path must start with /");
    }
    CallDeadline deadline = CallDeadline.startingNow(settings.maxCallDuration());
    return attempt(provider, path, request, deadline)
        .thenCompose(result -> sendAgainIfNeverSent(provider, path, request, deadline, result));
  }

  /**
   * The one retry: a refused connect or a failed TLS handshake proves the provider never saw the
   * request (free, and not billed), so an in-memory body is sent once more at once.
   */
  private CompletionStage<UpstreamResult> sendAgainIfNeverSent(
      Provider provider,
      String path,
      UpstreamRequest request,
      CallDeadline deadline,
      UpstreamResult first) {
    if (first instanceof UpstreamResult.ConnectionFailed failed
        && failed.isRetryableNeverSent()
        && request.body() instanceof UpstreamBody.Strict) {
      LOG.info(
          "upstream call never sent provider={} error={}; sending it once more",
          provider.wireName(),
          failed.safeErrorClass());
      return attempt(provider, path, request, deadline);
    }
    return CompletableFuture.completedFuture(first);
  }

  private CompletionStage<UpstreamResult> attempt(
      Provider provider, String path, UpstreamRequest request, CallDeadline deadline) {
    Pool pool = pools.get(provider);
    Optional<ConnectionSlots.Slot> slot = pool.slots().tryTake();
    if (slot.isEmpty()) {
      // Every connection is busy (long streams hold theirs to the last byte): refused now, never
      // queued.
      return busy();
    }
    HttpRequest httpRequest = toHttpRequest(pool, path, request);
    CompletionStage<HttpResponse> sent;
    Runnable release;
    if (pool.http2().isPresent()) {
      Optional<Http2Connections.Stream> stream = pool.http2().get().send(httpRequest);
      if (stream.isEmpty()) {
        // Every HTTP/2 connection carries all the streams it may: refused now, as over HTTP/1.1.
        slot.get().release();
        return busy();
      }
      sent = stream.get().response();
      release =
          () -> {
            slot.get().release();
            stream.get().done().run();
          };
    } else {
      sent = http.singleRequest(httpRequest, pool.https(), pool.settings(), poolLog);
      release = slot.get()::release;
    }
    CompletableFuture<UpstreamResult> result = new CompletableFuture<>();
    // An HTTP/1.1 connection whose answer never started is closed by the pool's idle timeout,
    // which gives the slot back through onResponse; an HTTP/2 stream has no such timer of its own
    // (its connection stays busy with other streams), so the call gives its stream back when it
    // stops waiting.
    Runnable onExpiry = pool.http2().isPresent() ? release : () -> {};
    Cancellable timer = startResponseTimer(pool, deadline, result, onExpiry);
    sent.whenComplete(
        (response, error) ->
            onResponse(provider, pool, deadline, timer, result, response, error, release));
    return result;
  }

  private static CompletionStage<UpstreamResult> busy() {
    return CompletableFuture.completedFuture(
        new UpstreamResult.ConnectionFailed(SafeErrors.UPSTREAM_BUSY));
  }

  private HttpRequest toHttpRequest(Pool pool, String path, UpstreamRequest request) {
    List<org.apache.pekko.http.javadsl.model.HttpHeader> headers =
        HeaderPolicy.upstreamRequestHeaders(pool.config(), request.callerHeaders());
    return HttpRequest.create()
        .withUri(pool.uri(path))
        .withMethod(request.method())
        .withHeaders(headers)
        .withEntity(UpstreamBody.toEntity(request.body()));
  }

  /**
   * The headers must come within the provider's response-start-timeout, and within what is left of
   * the call's max duration when that is sooner (a retried call has used some of it).
   */
  private Cancellable startResponseTimer(
      Pool pool,
      CallDeadline deadline,
      CompletableFuture<UpstreamResult> result,
      Runnable onExpiry) {
    Duration responseStart = pool.config().responseStartTimeout();
    Duration left = deadline.left();
    String errorClass =
        left.compareTo(responseStart) < 0
            ? SafeErrors.MAX_CALL_DURATION
            : SafeErrors.RESPONSE_START_TIMEOUT;
    Runnable expire =
        () -> {
          if (result.complete(new UpstreamResult.ConnectionFailed(errorClass))) {
            onExpiry.run();
          }
        };
    return system
        .scheduler()
        .scheduleOnce(
            left.compareTo(responseStart) < 0 ? left : responseStart,
            expire,
            system.executionContext());
  }

  private void onResponse(
      Provider provider,
      Pool pool,
      CallDeadline deadline,
      Cancellable timer,
      CompletableFuture<UpstreamResult> result,
      HttpResponse response,
      Throwable error,
      Runnable release) {
    timer.cancel();
    if (error != null) {
      release.run();
      String errorClass = SafeErrors.classify(error);
      LOG.warn("upstream call failed provider={} error={}", provider.wireName(), errorClass);
      result.complete(new UpstreamResult.ConnectionFailed(errorClass));
      return;
    }
    HttpResponse readable = UpstreamEncoding.decoded(response, materializer);
    if (!result.complete(responded(pool, readable, deadline, release))) {
      LOG.warn("upstream response after timeout provider={} discarded", provider.wireName());
      readable
          .discardEntityBytes(materializer)
          .completionStage()
          .whenComplete((done, failure) -> release.run());
    }
  }

  private UpstreamResult.Responded responded(
      Pool pool, HttpResponse response, CallDeadline deadline, Runnable release) {
    Source<ByteString, ?> body = response.entity().getDataBytes();
    if (pool.http2().isPresent()) {
      body = silentStreamCut(body, pool.config().idleTimeout());
    }
    return new UpstreamResult.Responded(
        response.status().intValue(),
        HeaderPolicy.passedBackResponseHeaders(response.getHeaders()),
        response.entity().getContentType(),
        cutAtDeadline(body, deadline, release));
  }

  /**
   * Over HTTP/1.1 a stream silent for {@code idle-timeout} is cut by its connection's idle timeout;
   * an HTTP/2 connection carries other streams and stays busy, so each stream gets its own timer
   * (the body fails as {@code idle_timeout}, its stream is reset).
   */
  private static Source<ByteString, ?> silentStreamCut(Source<ByteString, ?> body, Duration idle) {
    return body.idleTimeout(idle)
        .mapError(
            new org.apache.pekko.japi.pf.PFBuilder<Throwable, Throwable>()
                .match(
                    java.util.concurrent.TimeoutException.class, e -> new StreamIdleTimeout(idle))
                .build());
  }

  /** An HTTP/2 stream silent past the provider's {@code idle-timeout} (safe class idle_timeout). */
  static final class StreamIdleTimeout extends RuntimeException {
    StreamIdleTimeout(Duration idle) {
      super("upstream stream silent for " + idle, null, false, false);
    }
  }

  /**
   * The body, failed with {@link MaxCallDurationExceeded} (and its connection closed) if it is
   * still flowing when the call's max duration runs out. When the body ends, however it ends, the
   * timer is cancelled and the call's connection slot given back (the pool frees the connection
   * then too).
   */
  private Source<ByteString, ?> cutAtDeadline(
      Source<ByteString, ?> body, CallDeadline deadline, Runnable release) {
    SharedKillSwitch cut = KillSwitches.shared("max-call-duration");
    Cancellable timer =
        system
            .scheduler()
            .scheduleOnce(
                deadline.left(),
                () -> cut.abort(new MaxCallDurationExceeded(deadline.limit())),
                system.executionContext());
    return body.via(cut.flow())
        .watchTermination(
            (mat, done) ->
                done.whenComplete(
                    (d, e) -> {
                      timer.cancel();
                      release.run();
                    }));
  }

  /**
   * Builds every provider's connection pool now instead of on its first call. A pool of {@code
   * max-connections} = 10,000 slots is slow to build on a busy box (seconds), and the call that
   * found it missing would pay that as time to first byte. Nothing is sent and no connection is
   * opened: Pekko's pool master only sets the pool up ({@code min-connections} is 0).
   *
   * @return completes once the pool master has built them: it handles requests in the order they
   *     were asked, so its answer to the size query sent after the starts means they are done.
   *     Completes with the number of pools it runs (providers on the same base URL with the same
   *     settings share one).
   */
  public CompletionStage<Integer> startPools() {
    for (Pool pool : pools.values()) {
      if (pool.http2().isPresent()) {
        // HTTP/2 calls go through the gateway's own few connections, not Pekko's host pool.
        continue;
      }
      java.net.URI base = java.net.URI.create(pool.config().baseUrl());
      boolean https = "https".equalsIgnoreCase(base.getScheme());
      int port = base.getPort() >= 0 ? base.getPort() : https ? 443 : 80;
      // The same host, port, settings, TLS context and log as singleRequest uses in attempt(): the
      // same pool key, so calls find this pool and do not build a second one.
      if (https) {
        http.cachedHostConnectionPoolHttps(
            ConnectHttp.toHostHttps(base.getHost(), port).withCustomHttpsContext(pool.https()),
            pool.settings(),
            poolLog);
      } else {
        http.cachedHostConnectionPool(
            ConnectHttp.toHost(base.getHost(), port), pool.settings(), poolLog);
      }
    }
    return poolsRunning(system);
  }

  /**
   * How many host connection pools Pekko runs in {@code system}. Pekko marks this query internal
   * (its own tests use it); it is read-only and answered by the pool master in order after every
   * start asked before it, which is what {@link #startPools} needs to know.
   */
  public static CompletionStage<Integer> poolsRunning(ActorSystem<?> system) {
    scala.concurrent.Future<Object> size =
        ((org.apache.pekko.http.scaladsl.HttpExt)
                org.apache.pekko.http.scaladsl.Http.get(system.classicSystem()))
            .poolSize();
    return scala.jdk.javaapi.FutureConverters.asJava(size).thenApply(n -> (Integer) n);
  }

  /** Calls to {@code provider} holding (or opening) a pooled connection right now. */
  public int connectionsInUse(Provider provider) {
    return pools.get(provider).slots().inUse();
  }

  /** HTTP/2 connections open (or opening) to {@code provider}; 0 when it is reached by HTTP/1.1. */
  int http2Connections(Provider provider) {
    return pools.get(provider).http2().map(Http2Connections::liveConnections).orElse(0);
  }

  /** When a call started and how long it may last, across its (at most two) attempts. */
  private record CallDeadline(long startNanos, Duration limit) {
    static CallDeadline startingNow(Duration limit) {
      return new CallDeadline(System.nanoTime(), limit);
    }

    /** What is left of the limit, never negative. */
    Duration left() {
      Duration used = Duration.ofNanos(System.nanoTime() - startNanos);
      Duration left = limit.minus(used);
      return left.isNegative() ? Duration.ZERO : left;
    }
  }

  private Pool pool(ProviderSettings p) {
    ConnectionPoolSettings defaults = ConnectionPoolSettings.create(system.classicSystem());
    ClientConnectionSettings connection =
        defaults
            .getConnectionSettings()
            .withConnectingTimeout(p.connectTimeout())
            .withIdleTimeout(p.idleTimeout());
    ConnectionPoolSettings poolSettings =
        defaults
            .withConnectionSettings(connection)
            .withMaxConnections(p.maxConnections())
            .withMaxOpenRequests(p.maxOpenRequests())
            .withKeepAliveTimeout(p.keepAliveTimeout())
            .withMaxRetries(0);
    if (transport.isPresent()) {
      poolSettings = poolSettings.withTransport(transport.get());
    }
    if (p.apiKey().isEmpty()) {
      LOG.warn(
          "no API key configured for provider={}; calls go out without one",
          p.provider().wireName());
    }
    HttpsConnectionContext https = http.defaultClientHttpsContext();
    Optional<Http2Connections> http2 =
        p.isHttp2()
            ? Optional.of(
                new Http2Connections(
                    http,
                    p,
                    // Each stream has its own idle timer (silentStreamCut); the connection's is
                    // longer, so a silent stream is cut alone, with its own error, and never takes
                    // the calls just sent on the same connection with it. A connection left
                    // without streams is closed after keep-alive-timeout.
                    connection.withIdleTimeout(p.idleTimeout().plus(p.keepAliveTimeout())),
                    https,
                    poolLog,
                    materializer,
                    (delay, task) ->
                        system.scheduler().scheduleOnce(delay, task, system.executionContext())))
            : Optional.empty();
    return new Pool(
        p,
        poolSettings,
        https,
        new ConnectionSlots(p.maxConnections()),
        new UpstreamUris(p.baseUrl()),
        http2);
  }

  /**
   * One provider's pool: its settings, the TLS context (ignored for http base URLs), the slots that
   * keep calls from queueing behind its busy connections, its upstream URIs, and its HTTP/2
   * connections when {@code http2} is on (then Pekko's HTTP/1.1 host pool is not used).
   */
  private record Pool(
      ProviderSettings config,
      ConnectionPoolSettings settings,
      HttpsConnectionContext https,
      ConnectionSlots slots,
      UpstreamUris uris,
      Optional<Http2Connections> http2) {
    Uri uri(String path) {
      return uris.of(path);
    }
  }
}
