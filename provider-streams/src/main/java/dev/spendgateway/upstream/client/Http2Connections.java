package dev.spendgateway.upstream.client;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.Done;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.apache.pekko.http.javadsl.OutgoingConnection;
import org.apache.pekko.http.javadsl.OutgoingConnectionBuilder;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseFuture;
import org.apache.pekko.http.javadsl.settings.ClientConnectionSettings;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.QueueOfferResult;
import org.apache.pekko.stream.StreamTcpException;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * One provider's HTTP/2 connections: each call is a stream on one of at most {@code
 * http2-connections} connections, at most {@code http2-streams-per-connection} streams on each. A
 * burst of calls then opens a few connections instead of one per call, which is where an HTTP/1.1
 * burst spends its time (connection set-up in Pekko's client costs milliseconds of CPU each).
 *
 * <p>Why the gateway counts streams itself instead of leaving it to Pekko: until the provider's
 * SETTINGS frame arrives, Pekko's client assumes no stream limit, so a burst on a new connection
 * can open more streams than the provider allows; the provider refuses those (RST_STREAM
 * REFUSED_STREAM) and Pekko 1.3's client then never answers the refused request (or, when the
 * refusal comes after the request went out whole, ends the connection with a PROTOCOL_ERROR): the
 * caller waits until a timeout. Kept at or below what providers advertise, no stream is refused.
 * Past every connection's streams a call is refused at once ({@link SafeErrors#UPSTREAM_BUSY}), as
 * over HTTP/1.1: it never queues behind long streams.
 *
 * <p>Connections are opened when a call needs one and replaced when they end (the provider's
 * GOAWAY, an idle close, a broken socket): requests still waiting for their answer on an ended
 * connection fail with its cause (a refused connect stays a {@link java.net.ConnectException}, so
 * the caller's one free retry still applies). Thread-safe.
 */
final class Http2Connections {

  /** A call's stream: the answer's head, and what gives the stream back (idempotent). */
  record Stream(CompletionStage<HttpResponse> response, Runnable done) {}

  private final ProviderSettings config;
  private final OutgoingConnectionBuilder builder;
  private final Materializer materializer;
  private final java.util.function.BiConsumer<java.time.Duration, Runnable> later;
  private final Connection[] connections;

  Http2Connections(
      Http http,
      ProviderSettings config,
      ClientConnectionSettings connectionSettings,
      HttpsConnectionContext https,
      LoggingAdapter log,
      Materializer materializer,
      java.util.function.BiConsumer<java.time.Duration, Runnable> later) {
    java.net.URI base = java.net.URI.create(config.baseUrl());
    int port = base.getPort() >= 0 ? base.getPort() : config.isTls() ? 443 : 80;
    this.config = config;
    this.builder =
        http.connectionTo(base.getHost())
            .toPort(port)
            .withClientConnectionSettings(connectionSettings)
            .withCustomHttpsConnectionContext(https)
            .logTo(log);
    this.materializer = materializer;
    this.later = later;
    this.connections = new Connection[config.http2Connections()];
  }

  /**
   * Sends {@code request} as a stream on a connection with a free stream, opening one if needed.
   *
   * @return empty when every connection carries its {@code http2-streams-per-connection} streams
   */
  Optional<Stream> send(HttpRequest request) {
    Connection connection = take();
    if (connection == null) {
      return Optional.empty();
    }
    CompletableFuture<HttpResponse> response = new CompletableFuture<>();
    AtomicBoolean given = new AtomicBoolean();
    Runnable done =
        () -> {
          if (given.compareAndSet(false, true) && connection.open.decrementAndGet() == 0) {
            closeWhenUnused(connection);
          }
        };
    connection.waiting.add(response);
    response.whenComplete((r, e) -> connection.waiting.remove(response));
    QueueOfferResult offered =
        connection.queue.offer(
            request.addAttribute(ResponseFuture.KEY(), ResponseFuture.apply(response)));
    if (!offered.equals(QueueOfferResult.enqueued())) {
      // The connection ended between take() and offer(): nothing was sent on it.
      response.completeExceptionally(
          new StreamTcpException("HTTP/2 connection to the provider closed before the request"));
    }
    if (connection.ended.isDone()) {
      // Ended while this request was being added: end() may have run before it was listed.
      connection.ended.thenAccept(cause -> response.completeExceptionally(cause));
    }
    return Optional.of(new Stream(response, done));
  }

  /**
   * A connection without streams for {@code keep-alive-timeout} is closed, as a pooled HTTP/1.1 one
   * is: below the provider's own idle close, so the gateway never opens a stream on a connection
   * the provider is closing; and a burst's connections do not stay open for good.
   */
  private void closeWhenUnused(Connection connection) {
    long idleSince = System.nanoTime();
    connection.idleSince = idleSince;
    later.accept(
        config.keepAliveTimeout(),
        () -> {
          synchronized (connections) {
            if (connection.open.get() > 0 || connection.idleSince != idleSince) {
              return; // used again since
            }
            if (connection.ended.complete(
                new StreamTcpException("HTTP/2 connection closed after keep-alive-timeout"))) {
              connection.queue.complete();
            }
          }
        });
  }

  /** Streams open on all connections right now (tests, metrics). */
  int openStreams() {
    int sum = 0;
    synchronized (connections) {
      for (Connection c : connections) {
        if (c != null) {
          sum += c.open.get();
        }
      }
    }
    return sum;
  }

  /** Connections open or opening right now. */
  int liveConnections() {
    int live = 0;
    synchronized (connections) {
      for (Connection c : connections) {
        if (c != null && !c.ended.isDone()) {
          live++;
        }
      }
    }
    return live;
  }

  /**
   * A stream on the first live connection with one free (so a quiet provider is served by one
   * connection and a burst fills them in turn), else on a connection opened in the first empty
   * place; null when there is none.
   */
  private Connection take() {
    int limit = config.http2StreamsPerConnection();
    synchronized (connections) {
      int empty = -1;
      for (int i = 0; i < connections.length; i++) {
        Connection c = connections[i];
        if (c == null || c.ended.isDone()) {
          if (empty < 0) {
            empty = i;
          }
          continue;
        }
        if (c.open.get() < limit) {
          c.open.incrementAndGet();
          c.idleSince = 0;
          return c;
        }
      }
      if (empty < 0) {
        return null;
      }
      Connection opened = open();
      opened.open.incrementAndGet();
      connections[empty] = opened;
      return opened;
    }
  }

  private Connection open() {
    Flow<HttpRequest, HttpResponse, CompletionStage<OutgoingConnection>> flow =
        config.isTls() ? builder.http2() : builder.http2WithPriorKnowledge();
    // The queue holds requests only while the connection is being opened (the gateway never puts
    // more streams on it than it may carry), so its size is one connection's streams.
    Pair<
            Pair<BoundedSourceQueue<HttpRequest>, CompletionStage<OutgoingConnection>>,
            CompletionStage<Done>>
        running =
            Source.<HttpRequest>queue(config.http2StreamsPerConnection())
                .viaMat(flow, Keep.both())
                .toMat(
                    Sink.foreach(
                        response ->
                            response
                                .getAttribute(ResponseFuture.KEY())
                                .ifPresent(f -> f.future().complete(response))),
                    Keep.both())
                .run(materializer);
    Connection connection = new Connection(running.first().first());
    running
        .first()
        .second()
        .whenComplete(
            (c, error) -> {
              if (error != null) {
                connection.end(error);
              }
            });
    running
        .second()
        .whenComplete(
            (d, error) ->
                connection.end(
                    error != null
                        ? error
                        : new StreamTcpException(
                            "HTTP/2 connection to the provider closed before the answer")));
    return connection;
  }

  /** One connection: its request queue, its streams, the requests awaiting their answer. */
  private static final class Connection {
    final BoundedSourceQueue<HttpRequest> queue;
    final AtomicInteger open = new AtomicInteger();
    final Set<CompletableFuture<HttpResponse>> waiting = ConcurrentHashMap.newKeySet();

    /** When its last stream ended (guarded by the connections' lock for the close decision). */
    volatile long idleSince;

    /** Completes with the cause once the connection has ended. */
    final CompletableFuture<Throwable> ended = new CompletableFuture<>();

    Connection(BoundedSourceQueue<HttpRequest> queue) {
      this.queue = queue;
    }

    void end(Throwable cause) {
      if (ended.complete(cause)) {
        queue.fail(cause);
      }
      for (CompletableFuture<HttpResponse> f : waiting) {
        f.completeExceptionally(cause);
      }
    }
  }
}
