package dev.spendgateway.edge.call;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Materializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The gateway's own 429s are made in one place for every route: typed as each provider's SDK
 * expects a rate limit, with {@code retry-after}, and the line's word.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RefusalTest {
  private final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  void stop() {
    testKit.shutdownTestKit();
  }

  @ParameterizedTest(name = "a {0}-shaped 429 ({2}) is typed {1}")
  @CsvSource({
    "ANTHROPIC, rate_limit_error, rate_limited",
    "OPENAI,    rate_limited,     rate_limited",
    "ANTHROPIC, rate_limit_error, pool_full",
    "OPENAI,    rate_limited,     budget_spent",
  })
  void everyGatewayMade429IsTypedForItsShape(Shape shape, String type, String errorClass)
      throws Exception {
    Refusal r = Refusal.tooManyRequests(shape, "slow down", 7, errorClass);

    assertEquals(429, r.status());
    assertEquals(errorClass, r.errorClass());
    assertEquals("7", r.response().getHeader("retry-after").orElseThrow().value());
    assertEquals(type, body(r.response()).path("error").path("type").asText());
  }

  private JsonNode body(HttpResponse response) throws Exception {
    var strict =
        response
            .entity()
            .toStrict(3000, Materializer.matFromSystem(testKit.system()))
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS);
    return new ObjectMapper().readTree(strict.getData().utf8String());
  }
}
