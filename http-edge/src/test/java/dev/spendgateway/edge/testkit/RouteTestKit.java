package dev.spendgateway.edge.testkit;

import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.server.RouteResult;
import org.apache.pekko.http.javadsl.testkit.RouteTest;
import org.apache.pekko.http.javadsl.testkit.TestRouteResult;
import org.apache.pekko.stream.Materializer;
import org.junit.jupiter.api.Assertions;
import scala.concurrent.Future;

/**
 * Pekko HTTP's route testkit for JUnit 5 tests: runs a route on a request in memory, no socket, for
 * tests of routing, validation and answers rather than of the connection. (The testkit's own base,
 * {@code JUnitRouteTest}, is JUnit 4; this adapter hands its checks to JUnit 5's assertions.)
 * Usage: {@code new RouteTestKit(system).testRoute(route).run(request)}.
 */
public final class RouteTestKit extends RouteTest {
  private final ActorSystem system;
  private final Materializer materializer;

  public RouteTestKit(org.apache.pekko.actor.typed.ActorSystem<?> system) {
    this.system = Adapter.toClassic(system);
    this.materializer = Materializer.matFromSystem(system);
  }

  @Override
  public ActorSystem system() {
    return system;
  }

  @Override
  public Materializer materializer() {
    return materializer;
  }

  @Override
  public TestRouteResult createTestRouteResultAsync(
      HttpRequest request, Future<RouteResult> result) {
    return new TestRouteResult(result, awaitDuration(), system.dispatcher(), materializer) {
      @Override
      public void fail(String message) {
        Assertions.fail(message);
      }

      @Override
      public void assertEquals(Object expected, Object actual, String message) {
        Assertions.assertEquals(expected, actual, message);
      }

      @Override
      public void assertEquals(int expected, int actual, String message) {
        Assertions.assertEquals(expected, actual, message);
      }

      @Override
      public void assertTrue(boolean predicate, String message) {
        Assertions.assertTrue(predicate, message);
      }
    };
  }
}
