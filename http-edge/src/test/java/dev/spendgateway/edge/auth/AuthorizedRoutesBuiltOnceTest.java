package dev.spendgateway.edge.auth;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.japi.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The token check builds its two routes when the route is composed, not per request: a route tree
 * rebuilt inside the per-request lambda was a measurable share of the gateway's CPU per call. The
 * answers stay what they were (right token → inner, otherwise → the refusal).
 */
class AuthorizedRoutesBuiltOnceTest {
  private static final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // case          | header        | value               | status
        "bearer token    | authorization | Bearer right-token  | 200",
        "x-api-key       | x-api-key     | right-token         | 200",
        "wrong token     | x-api-key     | wrong-token         | 401",
        "no token        | x-other       | right-token         | 401",
      })
  void answersAsBeforeAndBuildsEachRouteOnce(
      String ignoredCase, String header, String value, int status) throws Exception {
    AtomicInteger builtInner = new AtomicInteger();
    AtomicInteger builtRefusal = new AtomicInteger();
    Route route =
        new GatewayAuth("right-token")
            .authorized(
                () -> {
                  builtRefusal.incrementAndGet();
                  return complete(StatusCodes.UNAUTHORIZED);
                },
                () -> {
                  builtInner.incrementAndGet();
                  return complete(StatusCodes.OK);
                });
    Function<HttpRequest, CompletionStage<HttpResponse>> handler =
        route.seal().handler(kit.system());

    for (int i = 0; i < 3; i++) {
      HttpResponse response =
          handler
              .apply(HttpRequest.create("/").addHeader(RawHeader.create(header, value)))
              .toCompletableFuture()
              .get(5, TimeUnit.SECONDS);
      assertEquals(status, response.status().intValue());
    }
    assertEquals(1, builtInner.get(), "inner route built once, not per request");
    assertEquals(1, builtRefusal.get(), "refusal route built once, not per request");
  }
}
