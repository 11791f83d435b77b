package dev.spendgateway.edge.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.call.CallTarget.Vetted;
import dev.spendgateway.edge.call.SpendHeaders.SpendContext;
import dev.spendgateway.edge.router.RoutedPreparation.Routed;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.request.PolicyLimits;
import dev.spendgateway.policy.request.RequestPolicy;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.FailoverPlan;
import dev.spendgateway.upstream.failover.FailoverSettings;
import dev.spendgateway.upstream.failover.RoutingProfiles;
import dev.spendgateway.upstream.failover.SchemaModeMemory;
import java.time.LocalDate;
import java.util.EnumSet;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fallback's translated body is built only when the call goes to the fallback: a call its
 * primary answers never translates, and a call that fails over translates once however often the
 * loop asks.
 */
class RoutedPreparationTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final LocalDate TODAY = LocalDate.of(2026, 6, 1);
  private static final Config CONFIG = ConfigFactory.load();
  private static final RouterContext RC = routerContext();

  static Stream<Arguments> requests() {
    return Stream.of(
        Arguments.of("a request the fallback can take", "{}", false),
        // A penalty has no Claude equivalent: an eager build would try (and fail) to translate
        // every such call, even the ones the primary answers.
        Arguments.of("a request the fallback cannot take", "{\"frequency_penalty\":0.5}", true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("requests")
  void theFallbackBodyIsBuiltOnlyWhenTheCallGoesThere(
      String sentence, String extra, boolean blocked) throws Exception {
    AtomicInteger builds = new AtomicInteger();
    Routed routed =
        ready(
            RoutedPreparation.prepare(
                request(extra),
                spend(),
                new DataClass("internal", EnumSet.allOf(Provider.class)),
                Optional.empty(),
                false,
                RC,
                model -> false,
                TODAY,
                (policy, profile, chat, today) -> {
                  builds.incrementAndGet();
                  return RoutedPreparation.fallback(policy, profile, chat, today);
                }));

    // Answered by the primary: the call starts there and delivers its 200.
    assertEquals(
        new FailoverPlan.Call(Provider.OPENAI, "gpt-6.1-sol-mini", false),
        FailoverPlan.start(routed.plan()),
        sentence);
    FailoverPlan.Decision answered =
        FailoverPlan.next(routed.plan(), attempt(200, "gpt-6.1-sol-mini"));
    assertInstanceOf(FailoverPlan.Deliver.class, answered.step(), sentence);
    assertEquals(0, builds.get(), sentence + ": answered by the primary, no fallback body built");

    // The primary fails: the plan looks at the fallback, and the loop takes its body if it
    // switches.
    FailoverPlan.Step afterOutage =
        FailoverPlan.next(routed.plan(), attempt(503, "gpt-6.1-sol-mini")).step();
    if (blocked) {
      FailoverPlan.GiveUp g = assertInstanceOf(FailoverPlan.GiveUp.class, afterOutage, sentence);
      assertEquals("fallback_unsupported", g.errorType(), g.message());
      assertNull(routed.fallbackBody().get(), "no body for a fallback that cannot take the call");
    } else {
      assertEquals(
          new FailoverPlan.SwitchTo(Provider.ANTHROPIC, "claude-haiku-5-5"), afterOutage, sentence);
      assertEquals(
          "claude-haiku-5-5",
          routed.fallbackBody().get().upstreamBody().path("model").asText(),
          sentence);
    }
    routed.fallbackBody().get();
    FailoverPlan.next(routed.plan(), attempt(503, "gpt-6.1-sol-mini"));
    assertEquals(1, builds.get(), sentence + ": built once, remembered after");
  }

  private static FailoverPlan.Attempt attempt(int status, String model) {
    return new FailoverPlan.Attempt(
        Provider.OPENAI,
        model,
        status,
        status == 200 ? null : "{\"error\":{\"message\":\"overloaded\"}}",
        Optional.empty(),
        Optional.empty(),
        false,
        false);
  }

  private static ObjectNode request(String extra) throws Exception {
    ObjectNode request =
        (ObjectNode)
            JSON.readTree(
                "{\"model\":\"fast-summary\",\"max_tokens\":64,"
                    + "\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
    request.setAll((ObjectNode) JSON.readTree(extra));
    return request;
  }

  private static SpendContext spend() {
    return new SpendContext(
        Lane.APP,
        "brand-a",
        1_000_000,
        10_000_000,
        "req-1",
        Optional.empty(),
        dev.spendgateway.edge.call.SpendHeaders.Priority.INTERACTIVE);
  }

  private static Routed ready(Vetted<Routed> vetted) {
    if (vetted instanceof Vetted.Ready<Routed> ready) {
      return ready.prepared();
    }
    throw new AssertionError("the request was refused: " + vetted);
  }

  /** Only what the preparation reads: the policy, the profiles and the failover settings. */
  private static RouterContext routerContext() {
    ModelCatalog catalog = ModelCatalog.fromMap(CONFIG.getConfig("models").root().unwrapped());
    RequestPolicy policy =
        new RequestPolicy(
            catalog, PolicyLimits.fromMap(CONFIG.getConfig("policy").root().unwrapped()));
    FailoverSettings settings = FailoverSettings.fromConfig(CONFIG);
    return new RouterContext(
        new CallServices(policy, null, null, null, null, null, null, null, null, null),
        RoutingProfiles.fromConfig(CONFIG, catalog),
        settings,
        new ConversationStickiness(
            settings.stickinessMaxEntries(), settings.stickinessTtl(), System::nanoTime),
        new SchemaModeMemory(settings.schemaMemoryMaxEntries()),
        null,
        System::nanoTime,
        ThreadLocalRandom::current);
  }
}
