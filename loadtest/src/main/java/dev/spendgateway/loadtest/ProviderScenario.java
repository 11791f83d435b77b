package dev.spendgateway.loadtest;

import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A small provider call — Anthropic Messages or OpenAI Chat Completions, JSON or SSE — through the
 * gateway's provider route with the spend headers, and (in compare mode) the same body straight to
 * the simulator at the same time, each with its own workers, so both paths see the same machine at
 * the same moment and a slow gateway does not delay the direct calls.
 */
final class ProviderScenario implements Scenario {

  /** Which provider API, its gateway path and its path on the provider (simulator) itself. */
  enum Dialect {
    ANTHROPIC("/anthropic/v1/messages", "/v1/messages", "claude-opus-5-5", "max_tokens"),
    OPENAI_CHAT(
        "/openai/v1/chat/completions",
        "/v1/chat/completions",
        "gpt-6.1-sol",
        "max_completion_tokens");

    final String gatewayPath;
    final String directPath;
    final String defaultModel;
    final String maxTokensField;

    Dialect(String gatewayPath, String directPath, String defaultModel, String maxTokensField) {
      this.gatewayPath = gatewayPath;
      this.directPath = directPath;
      this.defaultModel = defaultModel;
      this.maxTokensField = maxTokensField;
    }
  }

  private record Target(OpStats stats, HttpRequest request) {}

  private final boolean stream;
  private final List<Target> targets = new ArrayList<>();

  /**
   * @param direct the provider's (simulator's) base URL for compare mode, or {@code null}
   */
  ProviderScenario(
      Dialect dialect,
      URI gateway,
      URI direct,
      String token,
      Duration timeout,
      String model,
      int maxTokens,
      boolean stream,
      String lane,
      String brand,
      BigDecimal brandDailyUsd,
      BigDecimal brandMonthlyUsd) {
    this.stream = stream;
    String body = body(dialect, model == null ? dialect.defaultModel : model, maxTokens, stream);
    HttpRequest.Builder viaGateway =
        HttpRequest.newBuilder(gateway.resolve(dialect.gatewayPath))
            .timeout(timeout)
            .header("content-type", "application/json")
            .header("x-spend-lane", lane)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (dialect == Dialect.ANTHROPIC) {
      viaGateway.header("x-api-key", token).header("anthropic-version", "2023-06-01");
    } else {
      viaGateway.header("authorization", "Bearer " + token);
    }
    if (!"free".equals(lane)) {
      viaGateway.header("x-spend-brand", brand);
    }
    if ("app".equals(lane)) {
      viaGateway
          .header("x-spend-brand-daily-usd", brandDailyUsd.toPlainString())
          .header("x-spend-brand-monthly-usd", brandMonthlyUsd.toPlainString());
    }
    targets.add(new Target(new OpStats("gateway"), viaGateway.build()));
    if (direct != null) {
      HttpRequest.Builder straight =
          HttpRequest.newBuilder(direct.resolve(dialect.directPath))
              .timeout(timeout)
              .header("content-type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(body));
      if (dialect == Dialect.ANTHROPIC) {
        straight.header("x-api-key", "sim").header("anthropic-version", "2023-06-01");
      } else {
        straight.header("authorization", "Bearer sim");
      }
      targets.add(new Target(new OpStats("direct"), straight.build()));
    }
  }

  static String body(Dialect dialect, String model, int maxTokens, boolean stream) {
    return "{\"model\":\""
        + model
        + "\",\""
        + dialect.maxTokensField
        + "\":"
        + maxTokens
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello in five words.\"}]"
        + (stream ? ",\"stream\":true" : "")
        + "}";
  }

  @Override
  public int targets() {
    return targets.size();
  }

  @Override
  public List<OpStats> ops() {
    return targets.stream().map(Target::stats).toList();
  }

  @Override
  public void execute(HttpClient client, int target, long i, long fromNanos)
      throws InterruptedException {
    Target t = targets.get(target);
    Scenario.send(client, t.request(), t.stats(), fromNanos, stream, false);
  }
}
