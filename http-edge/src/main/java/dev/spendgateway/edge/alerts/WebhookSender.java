package dev.spendgateway.edge.alerts;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * POSTs an alert until the receiver answers 2xx: signed ({@code x-gateway-signature: sha256=<hex
 * HMAC-SHA256 of the body>}), with the same {@code x-gateway-delivery} id on every attempt, and
 * after a failure (non-2xx, no answer within the request timeout, no connection) again after {@code
 * firstRetry}, doubling up to {@code maxRetryInterval}, for as long as the process runs (an alert
 * still undelivered at a restart is sent again by the outbox that journaled it).
 */
public final class WebhookSender {
  private static final Logger log = LoggerFactory.getLogger(WebhookSender.class);

  private final URI url;
  private final byte[] secret;
  private final Duration firstRetry;
  private final Duration maxRetryInterval;
  private final Duration requestTimeout;
  private final HttpClient client;
  private final java.util.concurrent.atomic.AtomicInteger attempts =
      new java.util.concurrent.atomic.AtomicInteger();
  private volatile boolean stopped;

  public WebhookSender(
      URI url,
      String secret,
      Duration firstRetry,
      Duration maxRetryInterval,
      Duration requestTimeout) {
    this.url = url;
    this.secret = secret.getBytes(StandardCharsets.UTF_8);
    this.firstRetry = firstRetry;
    this.maxRetryInterval = maxRetryInterval;
    this.requestTimeout = requestTimeout;
    this.client = HttpClient.newBuilder().connectTimeout(requestTimeout).build();
  }

  public static WebhookSender of(AlertSettings settings) {
    return new WebhookSender(
        settings.webhook().orElseThrow(),
        settings.secret(),
        settings.firstRetry(),
        settings.maxRetryInterval(),
        settings.requestTimeout());
  }

  /** Delivers {@code alert}; {@code delivered} is called once, when the receiver took it. */
  public void deliver(Alert alert, Consumer<Alert> delivered) {
    attempt(alert, firstRetry, delivered);
  }

  /** Stops retrying (the process is going down; the outbox's journal still holds what is due). */
  public void stop() {
    stopped = true;
  }

  private void attempt(Alert alert, Duration nextWait, Consumer<Alert> delivered) {
    if (stopped) {
      return;
    }
    post(alert)
        .whenComplete(
            (status, failure) -> {
              if (failure == null && status / 100 == 2) {
                delivered.accept(alert);
                return;
              }
              log.warn(
                  "alert {} ({}) not delivered to the webhook ({}); next attempt in {}",
                  alert.deliveryId(),
                  alert.type(),
                  failure == null ? "HTTP " + status : failure.getClass().getSimpleName(),
                  nextWait);
              Duration after = nextWait.multipliedBy(2);
              Duration capped = after.compareTo(maxRetryInterval) > 0 ? maxRetryInterval : after;
              CompletableFuture.delayedExecutor(nextWait.toMillis(), TimeUnit.MILLISECONDS)
                  .execute(() -> attempt(alert, capped, delivered));
            });
  }

  /** Attempts made so far, every alert together. */
  public int attempts() {
    return attempts.get();
  }

  private CompletionStage<Integer> post(Alert alert) {
    attempts.incrementAndGet();
    HttpRequest request =
        HttpRequest.newBuilder(url)
            .timeout(requestTimeout)
            .header("content-type", "application/json")
            .header("x-gateway-delivery", alert.deliveryId())
            .header("x-gateway-signature", "sha256=" + sign(alert.body()))
            .POST(HttpRequest.BodyPublishers.ofString(alert.body(), StandardCharsets.UTF_8))
            .build();
    return client
        .sendAsync(request, HttpResponse.BodyHandlers.discarding())
        .thenApply(r -> r.statusCode());
  }

  /** Hex HMAC-SHA256 of {@code body} with the secret: what a receiver recomputes to trust it. */
  public String sign(String body) {
    return signature(secret, body);
  }

  public static String signature(byte[] secret, String body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.length == 0 ? new byte[1] : secret, "HmacSHA256"));
      return HexFormat.of().formatHex(mac.doFinal(body.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
