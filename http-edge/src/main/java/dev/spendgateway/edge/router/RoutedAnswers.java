package dev.spendgateway.edge.router;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.call.Refusal;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.AttemptBudget;
import dev.spendgateway.upstream.failover.FailoverPlan;
import dev.spendgateway.upstream.sse.SseLimits;
import dev.spendgateway.upstream.translate.AnthropicSseToChatChunks;
import dev.spendgateway.upstream.translate.MessagesToChat;
import dev.spendgateway.upstream.translate.OpenAiChunks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * What a routed caller gets, as pure functions of what happened: the answer translated to the
 * OpenAI chat shape under the profile's name, a provider's error in the OpenAI shape, or the
 * gateway's own refusal when the plan gives up.
 */
final class RoutedAnswers {
  static final String PROVIDER_HEADER = "x-gateway-provider";
  static final String FAILOVER_HEADER = "x-gateway-failover";
  static final String MODEL_HEADER = "x-gateway-model";
  static final String STRUCTURED_OUTPUT_HEADER = "x-gateway-structured-output";

  private RoutedAnswers() {}

  /** Where an attempt goes; {@code failover} is the {@code x-gateway-failover} value. */
  record Target(Provider provider, String model, boolean failover) {}

  /**
   * A failed attempt, as the plan and (when delivered) the caller see it.
   *
   * @param status its status; 0: no answer
   */
  record Failure(
      int status, ByteString body, List<HttpHeader> headers, Optional<Duration> retryAfter) {
    static Failure connection() {
      return new Failure(0, ByteString.emptyByteString(), List.of(), Optional.empty());
    }
  }

  /**
   * The headers that say which provider and model answered last, whether it was a failover, and
   * ({@code structured}, when the caller asked for structured output) how that attempt asked for
   * it: {@code strict}, {@code json_object} or {@code schema_in_prompt}, so a caller can see that
   * its schema was not enforced.
   */
  static List<HttpHeader> callHeaders(Target last, Optional<String> structured) {
    List<HttpHeader> headers = new ArrayList<>(4);
    headers.add(RawHeader.create(PROVIDER_HEADER, last.provider().wireName()));
    headers.add(RawHeader.create(MODEL_HEADER, last.model()));
    headers.add(RawHeader.create(FAILOVER_HEADER, Boolean.toString(last.failover())));
    structured.ifPresent(mode -> headers.add(RawHeader.create(STRUCTURED_OUTPUT_HEADER, mode)));
    return headers;
  }

  /** A whole answer, as the OpenAI chat completion the caller asked for. */
  static ByteString whole(Provider provider, ObjectNode json, String profile, long created) {
    ObjectNode answer;
    if (provider == Provider.OPENAI) {
      answer = json.deepCopy();
      answer.put("model", profile);
    } else {
      answer = MessagesToChat.translate(json, profile, created);
    }
    return ByteString.fromArrayUnsafe(RouterJson.bytes(answer));
  }

  /** A stream, as OpenAI chat chunks under the profile's name. */
  static Flow<ByteString, ByteString, NotUsed> stream(
      Provider provider, String profile, long created, SseLimits limits, boolean usageChunk) {
    if (provider == Provider.OPENAI) {
      return OpenAiChunks.flow(profile, limits, usageChunk);
    }
    return AnthropicSseToChatChunks.flow(profile, created, usageChunk);
  }

  /** A 200, with the provider's headers the caller may see and the policy's warnings. */
  static HttpResponse answered(
      List<HttpHeader> providerHeaders, List<String> warnings, ResponseEntity entity) {
    List<HttpHeader> headers = new ArrayList<>(UpstreamErrors.passBack(providerHeaders));
    for (String w : warnings) {
      headers.add(RawHeader.create("x-gateway-warning", w));
    }
    return HttpResponse.create().withStatus(StatusCodes.OK).addHeaders(headers).withEntity(entity);
  }

  /** The provider's own error (a caller error the other side would refuse too), OpenAI-shaped. */
  static HttpResponse upstreamError(Provider provider, Failure failure) {
    return HttpResponse.create()
        .withStatus(GatewayErrors.status(failure.status()))
        .addHeaders(UpstreamErrors.passBack(failure.headers()))
        .withEntity(
            HttpEntities.create(
                ContentTypes.APPLICATION_JSON,
                UpstreamErrors.toOpenAiShape(provider, failure.status(), failure.body())));
  }

  /** 502: the last provider gave no answer. */
  static Refusal unreachable(Provider provider) {
    return Refusal.of(
        Shape.OPENAI,
        502,
        "upstream_unavailable",
        provider.wireName() + " could not be reached.",
        null,
        "upstream_connection");
  }

  /**
   * 503 {@code fallback_not_permitted}: the primary failed and the call's data class does not allow
   * the fallback's provider. The primary's own error rides along ({@code error.primary}: provider,
   * status, its error in the OpenAI shape; its Retry-After as a header), so the caller sees why the
   * primary failed and can decide itself whether to wait or to send the data elsewhere.
   */
  static Refusal fallbackNotPermitted(Provider primary, FailoverPlan.GiveUp g, Failure failure) {
    ObjectNode extra = RouterJson.object();
    ObjectNode node = extra.putObject("primary");
    node.put("provider", primary.wireName());
    node.put("status", failure.status());
    if (failure.status() == 0) {
      node.putObject("error")
          .put("message", primary.wireName() + " could not be reached.")
          .put("type", "upstream_unavailable");
    } else {
      RouterJson.parseObject(
              UpstreamErrors.toOpenAiShape(primary, failure.status(), failure.body()))
          .ifPresent(shaped -> node.set("error", shaped.path("error")));
    }
    return new Refusal(
        GatewayErrors.error(
            Shape.OPENAI,
            g.status(),
            g.errorType(),
            g.message(),
            extra,
            UpstreamErrors.passBack(failure.headers())),
        g.errorType());
  }

  /** The plan gave up; {@code retryAfter} for a 429 (every 429 says when to come back). */
  static Refusal giveUp(FailoverPlan.GiveUp g, Optional<String> retryAfter) {
    List<HttpHeader> headers =
        retryAfter
            .<List<HttpHeader>>map(v -> List.of(RawHeader.create("retry-after", v)))
            .orElse(List.of());
    return Refusal.of(
        Shape.OPENAI, g.status(), g.errorType(), g.message(), null, g.errorType(), headers);
  }

  /**
   * The call's attempt budget is spent: a 429 when the provider kept answering 429 (with {@code
   * retryAfterSeconds}), else a 503.
   */
  static Refusal budgetSpent(
      String profile, AttemptBudget budget, int lastStatus, long retryAfterSeconds) {
    if (lastStatus == 429) {
      return Refusal.tooManyRequests(
          Shape.OPENAI,
          "The provider kept answering 429 within the call's attempt budget for profile '"
              + profile
              + "'.",
          retryAfterSeconds,
          "budget_spent");
    }
    return Refusal.of(
        Shape.OPENAI,
        503,
        "upstream_unavailable",
        "The call's attempt budget ("
            + budget.limits().maxAttempts()
            + " attempts, "
            + budget.limits().totalTime().toSeconds()
            + " s) is spent for profile '"
            + profile
            + "'.",
        null,
        "budget_spent");
  }

  /** 502: the answer could not be read to its end ({@code errorClass} says how). */
  static Refusal unreadable(String errorClass) {
    return Refusal.of(
        Shape.OPENAI,
        502,
        "upstream_unreadable",
        "The provider's answer could not be read to its end.",
        null,
        errorClass);
  }
}
