package dev.spendgateway.policy.failover;

import static dev.spendgateway.policy.failover.Classification.CALLER_ERROR;
import static dev.spendgateway.policy.failover.Classification.FAILOVER;
import static dev.spendgateway.policy.failover.Classification.MODEL_GONE;
import static dev.spendgateway.policy.failover.Classification.QUOTA_EXHAUSTED;
import static dev.spendgateway.policy.failover.Classification.RETRY_THEN_FAILOVER;
import static dev.spendgateway.policy.failover.Classification.SUCCESS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class ErrorClassifierTest {
  private static final Duration MAX_WAIT = Duration.ofSeconds(20);
  private static final String CREDIT_LOW =
      "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
          + "\"message\":\"Your credit balance is too low to access the Anthropic API.\"}}";

  @ParameterizedTest(name = "{0} {1} (retry-after {2}s) -> {4}")
  @CsvSource(
      nullValues = "none",
      value = {
        "OPENAI,    0,   none, none,                       FAILOVER",
        "ANTHROPIC, 0,   none, none,                       FAILOVER",
        "OPENAI,    200, none, none,                       SUCCESS",
        "OPENAI,    401, none, invalid key,                FAILOVER",
        "OPENAI,    402, none, none,                       FAILOVER",
        "OPENAI,    403, none, none,                       FAILOVER",
        "OPENAI,    408, none, none,                       FAILOVER",
        "OPENAI,    409, none, none,                       FAILOVER",
        "OPENAI,    429, 5,    none,                       RETRY_THEN_FAILOVER",
        "OPENAI,    429, 20,   none,                       RETRY_THEN_FAILOVER",
        "OPENAI,    429, 21,   none,                       FAILOVER",
        "OPENAI,    429, none, none,                       RETRY_THEN_FAILOVER",
        "OPENAI,    500, none, none,                       FAILOVER",
        "OPENAI,    503, none, none,                       FAILOVER",
        "OPENAI,    504, none, none,                       FAILOVER",
        "OPENAI,    505, none, none,                       CALLER_ERROR",
        "OPENAI,    529, none, none,                       CALLER_ERROR",
        "OPENAI,    410, none, model retired,              MODEL_GONE",
        "OPENAI,    400, none, invalid request,            CALLER_ERROR",
        "OPENAI,    400, none, credit balance is too low,  CALLER_ERROR",
        "OPENAI,    404, none, no such model,              CALLER_ERROR",
        "OPENAI,    422, none, none,                       CALLER_ERROR",
        "ANTHROPIC, 529, none, overloaded,                 FAILOVER",
        "ANTHROPIC, 429, 60,   none,                       FAILOVER",
        "ANTHROPIC, 400, none, Credit Balance Is Too Low,  FAILOVER",
        "ANTHROPIC, 400, none, prompt is too long,         CALLER_ERROR",
        "ANTHROPIC, 400, none, none,                       CALLER_ERROR",
        "ANTHROPIC, 410, none, none,                       MODEL_GONE",
        "ANTHROPIC, 413, none, request too large,          CALLER_ERROR",
      })
  void classifiesEachReason(
      Provider provider, int status, Long retryAfterSeconds, String body, Classification expected) {
    assertEquals(
        expected,
        ErrorClassifier.classify(
            provider,
            status,
            body,
            Optional.ofNullable(retryAfterSeconds).map(Duration::ofSeconds),
            MAX_WAIT));
  }

  @Test
  void anthropicsCreditBalance400FailsOverWithItsRealBody() {
    assertEquals(
        FAILOVER,
        ErrorClassifier.classify(Provider.ANTHROPIC, 400, CREDIT_LOW, Optional.empty(), MAX_WAIT));
  }

  @ParameterizedTest
  @EnumSource(Provider.class)
  void aConnectionErrorAlwaysFailsOver(Provider provider) {
    assertEquals(FAILOVER, ErrorClassifier.classifyConnectionError(provider));
  }

  static Stream<Arguments> everyStatus() {
    return Stream.of(Provider.values())
        .flatMap(p -> IntStream.rangeClosed(100, 599).mapToObj(s -> Arguments.of(p, s)));
  }

  /**
   * Every status 100-599 on both sides, against an expectation written independently of the
   * classifier: a status not named in the failover rules never fails over.
   */
  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("everyStatus")
  void everyStatusHasExactlyTheSpecifiedClass(Provider provider, int status) {
    Classification expected;
    if (status >= 200 && status < 300) {
      expected = SUCCESS;
    } else if (status == 410) {
      expected = MODEL_GONE;
    } else if (status == 429) {
      expected = RETRY_THEN_FAILOVER;
    } else if (Set.of(401, 402, 403, 408, 409, 500, 501, 502, 503, 504).contains(status)
        || (provider == Provider.ANTHROPIC && status == 529)) {
      expected = FAILOVER;
    } else {
      expected = CALLER_ERROR;
    }
    assertEquals(
        expected,
        ErrorClassifier.classify(
            provider, status, "{}", Optional.of(Duration.ofSeconds(1)), MAX_WAIT));
    Classification withCreditBody =
        ErrorClassifier.classify(provider, status, CREDIT_LOW, Optional.empty(), MAX_WAIT);
    boolean creditFailover = provider == Provider.ANTHROPIC && status == 400;
    // An empty balance on a 429 is a billing limit on either side: it does not clear by waiting.
    Classification withCredit =
        status == 429 ? QUOTA_EXHAUSTED : creditFailover ? FAILOVER : expected;
    assertEquals(withCredit, withCreditBody);
  }

  static final String OPENAI_QUOTA =
      "{\"error\":{\"message\":\"You exceeded your current quota, please check your plan and billing details.\","
          + "\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}";
  static final String OPENAI_RATE =
      "{\"error\":{\"message\":\"Rate limit reached for gpt-6.1-sol on requests per min (RPM): Limit 500.\","
          + "\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}";
  static final String ANTHROPIC_BILLING =
      "{\"type\":\"error\",\"error\":{\"type\":\"billing_error\",\"message\":\"Your organization has no credits.\"}}";
  static final String ANTHROPIC_RATE =
      "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}";

  static Stream<Arguments> tooManyRequests() {
    return Stream.of(
        Arguments.of(
            "OpenAI insufficient_quota is a quota 429: fail over at once",
            Provider.OPENAI,
            OPENAI_QUOTA,
            Optional.empty(),
            QUOTA_EXHAUSTED,
            ErrorClassifier.TooManyRequests.QUOTA),
        Arguments.of(
            "OpenAI insufficient_quota with a short Retry-After is still not worth waiting for",
            Provider.OPENAI,
            OPENAI_QUOTA,
            Optional.of(Duration.ofSeconds(1)),
            QUOTA_EXHAUSTED,
            ErrorClassifier.TooManyRequests.QUOTA),
        Arguments.of(
            "OpenAI billing_hard_limit_reached is a quota 429",
            Provider.OPENAI,
            "{\"error\":{\"code\":\"billing_hard_limit_reached\"}}",
            Optional.empty(),
            QUOTA_EXHAUSTED,
            ErrorClassifier.TooManyRequests.QUOTA),
        Arguments.of(
            "OpenAI rate_limit_exceeded retries with backoff",
            Provider.OPENAI,
            OPENAI_RATE,
            Optional.empty(),
            RETRY_THEN_FAILOVER,
            ErrorClassifier.TooManyRequests.RATE_LIMIT),
        Arguments.of(
            "OpenAI rate limit with an affordable Retry-After retries here",
            Provider.OPENAI,
            OPENAI_RATE,
            Optional.of(Duration.ofSeconds(2)),
            RETRY_THEN_FAILOVER,
            ErrorClassifier.TooManyRequests.RATE_LIMIT),
        Arguments.of(
            "Anthropic billing_error on a 429 is a quota 429",
            Provider.ANTHROPIC,
            ANTHROPIC_BILLING,
            Optional.empty(),
            QUOTA_EXHAUSTED,
            ErrorClassifier.TooManyRequests.QUOTA),
        Arguments.of(
            "Anthropic rate_limit_error retries with backoff",
            Provider.ANTHROPIC,
            ANTHROPIC_RATE,
            Optional.empty(),
            RETRY_THEN_FAILOVER,
            ErrorClassifier.TooManyRequests.RATE_LIMIT),
        Arguments.of(
            "a 429 without a body is a rate limit",
            Provider.OPENAI,
            null,
            Optional.empty(),
            RETRY_THEN_FAILOVER,
            ErrorClassifier.TooManyRequests.RATE_LIMIT));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tooManyRequests")
  void tellsAQuota429FromARateLimit429(
      String sentence,
      Provider provider,
      String body,
      Optional<Duration> retryAfter,
      Classification expected,
      ErrorClassifier.TooManyRequests kind) {
    assertEquals(expected, ErrorClassifier.classify(provider, 429, body, retryAfter, MAX_WAIT));
    assertEquals(kind, ErrorClassifier.kindOf429(body));
  }
}
