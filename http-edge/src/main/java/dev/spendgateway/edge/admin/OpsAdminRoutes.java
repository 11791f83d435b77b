package dev.spendgateway.edge.admin;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.money.Micros;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's view of a running gateway and the one switch an operator may need at 3 a.m.:
 *
 * <ul>
 *   <li>{@code GET /admin/status}: ready or not (the ledger recovered), the global and pool caps,
 *       open reservations, each provider's breaker, the models whose circuit a 410 opened;
 *   <li>{@code POST /admin/circuits/{model}/reset}: closes a model's circuit after the catalog or
 *       profile was fixed (a 410 otherwise keeps it open for {@code failover.model-gone-open-for},
 *       or until a restart).
 * </ul>
 *
 * Behind the admin token like every {@code /admin} route; anything else under {@code /admin} is
 * left to {@link AdminRoutes} (which answers 401/404). {@code bin/gateway-admin status} and {@code
 * reset-circuit} call these.
 */
public final class OpsAdminRoutes extends AllDirectives {
  private static final Logger admin = LoggerFactory.getLogger("admin");

  private final LedgerClient ledger;
  private final GatewayAuth adminAuth;
  private final Supplier<CompletionStage<Boolean>> ready;
  private final Optional<ProviderBreakers> breakers;
  private final Optional<ModelCircuits> circuits;
  private final java.util.function.Predicate<String> inCatalog;
  private final ObjectMapper mapper = new ObjectMapper();

  public OpsAdminRoutes(
      LedgerClient ledger,
      GatewayAuth adminAuth,
      Supplier<CompletionStage<Boolean>> ready,
      Optional<ProviderBreakers> breakers,
      Optional<ModelCircuits> circuits,
      java.util.function.Predicate<String> inCatalog) {
    this.ledger = ledger;
    this.inCatalog = inCatalog;
    this.adminAuth = adminAuth;
    this.ready = ready;
    this.breakers = breakers;
    this.circuits = circuits;
  }

  /** Rejects (falls through) without the admin token or on another path. */
  public Route route() {
    Route status = get(() -> completeWithFuture(status()));
    return pathPrefix(
        "admin",
        () ->
            adminAuth.authorized(
                reject(),
                concat(
                    path("status", () -> status),
                    path(
                        segment("circuits").slash(segment()).slash("reset"),
                        model -> post(() -> complete(reset(model)))))));
  }

  private CompletionStage<HttpResponse> status() {
    return ready
        .get()
        .thenCompose(
            isReady ->
                ledger
                    .usage(Optional.empty(), 0)
                    .handle(
                        (usage, failure) -> {
                          Map<String, Object> body = new LinkedHashMap<>();
                          body.put("ready", isReady && failure == null);
                          if (usage != null) {
                            body.put("openReservations", usage.openReservations());
                            body.put(
                                "caps", usage.caps().stream().map(OpsAdminRoutes::cap).toList());
                          } else {
                            body.put(
                                "ledger",
                                "no answer from the ledger: " + failure.getClass().getSimpleName());
                          }
                          Map<String, String> providers = new LinkedHashMap<>();
                          breakers.ifPresent(
                              b -> {
                                for (Provider p : Provider.values()) {
                                  providers.put(
                                      p.wireName(),
                                      b.state(p).name().toLowerCase(java.util.Locale.ROOT));
                                }
                              });
                          body.put("providerCircuits", providers);
                          body.put(
                              "openModelCircuits",
                              circuits.map(c -> List.copyOf(c.openModels())).orElse(List.of()));
                          return json(body);
                        }));
  }

  private static Map<String, Object> cap(CapUsage c) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("cap", c.cap().wireName());
    row.put("subject", c.subject());
    row.put("window", c.window());
    row.put("limitUsd", Micros.toUsd(c.limitMicros()));
    row.put("spentUsd", Micros.toUsd(c.spentMicros()));
    row.put("reservedUsd", Micros.toUsd(c.reservedMicros()));
    row.put("remainingUsd", Micros.toUsd(c.remainingMicros()));
    return row;
  }

  private HttpResponse reset(String model) {
    if (!model.matches("[A-Za-z0-9._:-]{1,128}")) {
      return badModel("model must be 1-128 characters of [A-Za-z0-9._:-]");
    }
    boolean wasOpen = circuits.map(c -> c.isOpen(model)).orElse(false);
    if (!wasOpen && !inCatalog.test(model)) {
      // A typo would otherwise answer "open": false, as if a circuit had been closed.
      return badModel(
          "model '"
              + model
              + "' is not in the model catalog (conf/models.conf) and has no open circuit; name"
              + " it as the catalog does (GET /admin/status lists the open circuits)");
    }
    circuits.ifPresent(c -> c.reset(model));
    admin.info("{\"action\":\"reset-circuit\",\"model\":\"{}\",\"wasOpen\":{}}", model, wasOpen);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("model", model);
    body.put("wasOpen", wasOpen);
    body.put("open", false);
    return json(body);
  }

  private HttpResponse badModel(String message) {
    Map<String, Object> error =
        Map.of("error", Map.of("type", "invalid_request", "field", "model", "message", message));
    return json(error).withStatus(StatusCodes.BAD_REQUEST);
  }

  private HttpResponse json(Object body) {
    try {
      return HttpResponse.create()
          .withEntity(ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(body));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
