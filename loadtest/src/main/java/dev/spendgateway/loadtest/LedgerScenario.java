package dev.spendgateway.loadtest;

import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The ledger API (README, "The ledger API"): {@code POST /ledger/reservations} with a fixed amount
 * and a unique id ({@code <runId>-<i>}), then, when the reservation was accepted, optionally settle
 * or void it.
 */
final class LedgerScenario implements Scenario {

  /** What happens to an accepted reservation. */
  enum Close {
    NONE,
    SETTLE,
    VOID
  }

  private final URI base;
  private final String token;
  private final Duration timeout;
  private final String idPrefix;
  private final String reserveBodyTemplate;
  private final Close close;
  private final String settleBody;
  private final OpStats reserve = new OpStats("reserve");
  private final OpStats closing;

  /** Ids whose reserve got no definite answer (5xx or no HTTP answer): the ledger may hold them. */
  private final Queue<String> indeterminate = new ConcurrentLinkedQueue<>();

  LedgerScenario(
      URI base,
      String token,
      Duration timeout,
      String idPrefix,
      String lane,
      String brand,
      BigDecimal amountUsd,
      BigDecimal brandDailyUsd,
      BigDecimal brandMonthlyUsd,
      Close close,
      BigDecimal actualUsd) {
    this.base = base;
    this.token = token;
    this.timeout = timeout;
    this.idPrefix = idPrefix;
    this.close = close;
    StringBuilder body = new StringBuilder("{\"id\":\"%s\",\"lane\":\"").append(lane).append('"');
    if (!"free".equals(lane)) {
      body.append(",\"brand\":\"").append(brand).append('"');
    }
    body.append(",\"amountUsd\":").append(amountUsd.toPlainString());
    if ("app".equals(lane)) {
      body.append(",\"brandDailyUsd\":")
          .append(brandDailyUsd.toPlainString())
          .append(",\"brandMonthlyUsd\":")
          .append(brandMonthlyUsd.toPlainString());
    }
    this.reserveBodyTemplate = body.append('}').toString();
    this.settleBody =
        actualUsd == null ? "{}" : "{\"actualUsd\":" + actualUsd.toPlainString() + "}";
    this.closing =
        close == Close.NONE ? null : new OpStats(close == Close.SETTLE ? "settle" : "void");
  }

  /** The reserve body for call {@code i}, as sent. */
  String reserveBody(long i) {
    return reserveBodyTemplate.formatted(idPrefix + "-" + i);
  }

  OpStats reserveStats() {
    return reserve;
  }

  /**
   * Reservation ids the run could not tell the fate of; {@link LoadTest} looks them up afterwards.
   */
  List<String> indeterminateIds() {
    return List.copyOf(indeterminate);
  }

  @Override
  public List<OpStats> ops() {
    List<OpStats> ops = new ArrayList<>(List.of(reserve));
    if (closing != null) {
      ops.add(closing);
    }
    return ops;
  }

  @Override
  public void execute(HttpClient client, int target, long i, long fromNanos)
      throws InterruptedException {
    Answer answer =
        Scenario.send(
            client, post("/ledger/reservations", reserveBody(i)), reserve, fromNanos, false, false);
    if (answer == null || answer.status() >= 500) {
      indeterminate.add(idPrefix + "-" + i);
    }
    if (closing != null && answer != null && answer.status() == 201) {
      String path =
          "/ledger/reservations/"
              + idPrefix
              + "-"
              + i
              + (close == Close.SETTLE ? "/settle" : "/void");
      Scenario.send(
          client,
          post(path, close == Close.SETTLE ? settleBody : "{}"),
          closing,
          System.nanoTime(),
          false,
          false);
    }
  }

  private HttpRequest post(String path, String body) {
    return HttpRequest.newBuilder(base.resolve(path))
        .timeout(timeout)
        .header("x-api-key", token)
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }
}
