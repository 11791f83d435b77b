package dev.spendgateway.policy.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The questions other modules ask about a provider's status, answered by {@link ErrorClassifier}
 * alone: worth a retry on the same side, counted by the breaker, counted by the operations screen.
 */
class ErrorClassifierQuestionsTest {
  private static final String QUOTA = "{\"error\":{\"code\":\"insufficient_quota\"}}";
  private static final String CREDIT_LOW = "Your credit balance is too low to access the API.";

  @ParameterizedTest(name = "{0} {1} ({2}) is transient: {3}")
  @CsvSource(
      nullValues = "none",
      value = {
        "OPENAI,    0,   none,       true",
        "ANTHROPIC, 0,   none,       true",
        "OPENAI,    408, none,       true",
        "OPENAI,    409, none,       true",
        "OPENAI,    429, none,       true",
        "OPENAI,    429, rate limit, true",
        "OPENAI,    429, QUOTA,      false",
        "ANTHROPIC, 429, CREDIT,     false",
        "OPENAI,    500, none,       true",
        "OPENAI,    502, none,       true",
        "OPENAI,    504, none,       true",
        "OPENAI,    505, none,       false",
        "ANTHROPIC, 529, none,       true",
        "OPENAI,    529, none,       false",
        "OPENAI,    401, none,       false",
        "OPENAI,    402, none,       false",
        "OPENAI,    403, none,       false",
        "ANTHROPIC, 400, CREDIT,     false",
        "OPENAI,    400, none,       false",
        "OPENAI,    410, none,       false",
        "OPENAI,    200, none,       false",
      })
  void aFaultIsTransientWhenWaitingCanClearIt(
      Provider provider, int status, String body, boolean transientFault) {
    assertEquals(transientFault, ErrorClassifier.isTransient(provider, status, bodyOf(body)));
  }

  @ParameterizedTest(name = "HTTP {0} counts against the provider: {1}")
  @CsvSource({
    "0, true",
    "500, true",
    "503, true",
    "505, true",
    "529, true",
    "200, false",
    "400, false",
    "401, false",
    "408, false",
    "410, false",
    "429, false"
  })
  void theBreakerCountsOnlyNoAnswerAndServerErrors(int status, boolean counts) {
    assertEquals(counts, ErrorClassifier.countsAgainstProvider(status));
  }

  @ParameterizedTest(name = "HTTP {0} is a provider failure on the screen: {1}")
  @CsvSource({
    "200, false",
    "400, false",
    "401, false",
    "404, false",
    "408, true",
    "410, true",
    "429, true",
    "500, true",
    "503, true",
    "529, true"
  })
  void theScreenCountsWhatTheProvidersSideGotWrong(int status, boolean failure) {
    assertEquals(failure, ErrorClassifier.isProviderFailure(status));
  }

  static Stream<Arguments> everyBody() {
    return Stream.of(Provider.values())
        .flatMap(p -> Stream.of("{}", QUOTA, CREDIT_LOW).map(b -> Arguments.of(p, b)));
  }

  /**
   * The answers agree with each other on every status 0 and 100-599: a transient fault is also one
   * the router fails over on, and whatever the breaker counts shows on the screen's failure rate.
   */
  @ParameterizedTest(name = "{0} with body {1}")
  @MethodSource("everyBody")
  void theAnswersAgreeWithTheClassification(Provider provider, String body) {
    IntStream.concat(
            IntStream.of(ErrorClassifier.CONNECTION_ERROR), IntStream.rangeClosed(100, 599))
        .forEach(
            status -> {
              Classification c =
                  ErrorClassifier.classify(
                      provider, status, body, Optional.empty(), Duration.ofSeconds(20));
              if (ErrorClassifier.isTransient(provider, status, body)) {
                assertTrue(
                    Set.of(Classification.FAILOVER, Classification.RETRY_THEN_FAILOVER).contains(c),
                    status + ": a transient fault fails over too, got " + c);
              }
              if (ErrorClassifier.countsAgainstProvider(status) && status != 0) {
                assertTrue(
                    ErrorClassifier.isProviderFailure(status),
                    status + ": the screen shows what the breaker counts");
              }
            });
  }

  private static String bodyOf(String name) {
    if (name == null) {
      return null;
    }
    return switch (name) {
      case "QUOTA" -> QUOTA;
      case "CREDIT" -> CREDIT_LOW;
      default -> name;
    };
  }
}
