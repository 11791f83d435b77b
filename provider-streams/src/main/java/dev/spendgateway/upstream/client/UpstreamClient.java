package dev.spendgateway.upstream.client;

import dev.spendgateway.policy.catalog.Provider;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.settings.ClientConnectionSettings;
import org.apache.pekko.http.javadsl.settings.ConnectionPoolSettings;
import org.apache.pekko.stream.Materializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's HTTP client to the providers: one Pekko HTTP host connection pool per provider
 * (via {@code Http.singleRequest} with that provider's {@link ConnectionPoolSettings}), TLS for
 * https base URLs, plain HTTP for http ones (the simulator on loopback).
 *
 * <p>Each call swaps the credentials ({@link HeaderPolicy}): the caller's gateway token and every
 * other credential stay home, the real key is added. Bodies stream in both directions; the
 * response body is handed back unread, decoded if the provider compressed it although asked not to
 * ({@link UpstreamEncoding}), so the caller and the usage tap read the same plain bytes. Pools never retry (max-retries 0: POST is not idempotent,
 * and retries belong to the failover router with its budget).
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

  private UpstreamClient(ActorSystem<?> system, UpstreamSettings settings) {
    this.system = system;
    this.settings = settings;
    this.http = Http.get(system);
    this.materializer = Materializer.matFromSystem(system);
    this.poolLog = system.classicSystem().log();
    for (Provider provider : Provider.values()) {
      pools.put(provider, pool(settings.provider(provider)));
    }
  }

  public static UpstreamClient create(ActorSystem<?> system, UpstreamSettings settings) {
    return new UpstreamClient(system, settings);
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
    Pool pool = pools.get(provider);
    CompletableFuture<UpstreamResult> result = new CompletableFuture<>();
    Cancellable timer = startResponseTimer(pool, result);
    http.singleRequest(toHttpRequest(pool, path, request), pool.https(), pool.settings(), poolLog)
        .whenComplete((response, error) -> onResponse(provider, timer, result, response, error));
    return result;
  }

  private HttpRequest toHttpRequest(Pool pool, String path, UpstreamRequest request) {
    List<org.apache.pekko.http.javadsl.model.HttpHeader> headers =
        HeaderPolicy.upstreamRequestHeaders(pool.config(), request.callerHeaders());
    return HttpRequest.create(pool.config().baseUrl() + path)
        .withMethod(request.method())
        .withHeaders(headers)
        .withEntity(UpstreamBody.toEntity(request.body()));
  }

  private Cancellable startResponseTimer(Pool pool, CompletableFuture<UpstreamResult> result) {
    Runnable expire =
        () -> result.complete(new UpstreamResult.ConnectionFailed(SafeErrors.RESPONSE_START_TIMEOUT));
    return system
        .scheduler()
        .scheduleOnce(pool.config().responseStartTimeout(), expire, system.executionContext());
  }

  private void onResponse(
      Provider provider,
      Cancellable timer,
      CompletableFuture<UpstreamResult> result,
      HttpResponse response,
      Throwable error) {
    timer.cancel();
    if (error != null) {
      String errorClass = SafeErrors.classify(error);
      LOG.warn("upstream call failed provider={} error={}", provider.wireName(), errorClass);
      result.complete(new UpstreamResult.ConnectionFailed(errorClass));
      return;
    }
    HttpResponse readable = UpstreamEncoding.decoded(response, materializer);
    if (!result.complete(responded(readable))) {
      LOG.warn("upstream response after timeout provider={} discarded", provider.wireName());
      readable.discardEntityBytes(materializer);
    }
  }

  private static UpstreamResult.Responded responded(HttpResponse response) {
    return new UpstreamResult.Responded(
        response.status().intValue(),
        HeaderPolicy.passedBackResponseHeaders(response.getHeaders()),
        response.entity().getContentType(),
        response.entity().getDataBytes());
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
            .withMaxRetries(0);
    if (p.apiKey().isEmpty()) {
      LOG.warn("no API key configured for provider={}; calls go out without one", p.provider().wireName());
    }
    return new Pool(p, poolSettings, http.defaultClientHttpsContext());
  }

  /** One provider's pool: its settings, and the TLS context (ignored for http base URLs). */
  private record Pool(
      ProviderSettings config, ConnectionPoolSettings settings, HttpsConnectionContext https) {}
}
