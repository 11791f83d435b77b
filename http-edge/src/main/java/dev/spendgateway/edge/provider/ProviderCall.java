package dev.spendgateway.edge.provider;

import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.call.Call;
import dev.spendgateway.edge.call.CallEnd;
import dev.spendgateway.edge.call.CallMetrics;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.call.CallTarget;
import dev.spendgateway.edge.call.Overload;
import dev.spendgateway.edge.call.Refusal;
import dev.spendgateway.edge.call.SpendHeaders;
import dev.spendgateway.edge.call.UpstreamExchange;
import dev.spendgateway.edge.call.UsageTelemetry;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.upstream.client.UpstreamRequest;
import dev.spendgateway.upstream.client.UpstreamResult;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.stream.UsageChunkFilter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * A pass-through route's target in the {@link dev.spendgateway.edge.call.CallPipeline}: the call
 * goes to this route's provider, once, and its answer reaches the caller as the provider sent it
 * (or a gateway 502/503 when none came). How the body is read and vetted is its {@link CallKind}'s.
 */
final class ProviderCall implements CallTarget<Preparation.Prepared> {
  /**
   * A refused call's model is caller text that no catalog vetted (it can be megabytes, or a prompt
   * pasted into the wrong field): the access log keeps it only when it looks like a model id.
   */
  private static final Pattern LOGGABLE_MODEL = Pattern.compile("[A-Za-z0-9._:/@+-]{1,64}");

  private final CallServices services;
  private final CallKind kind;

  ProviderCall(CallServices services, CallKind kind) {
    this.services = services;
    this.kind = kind;
  }

  @Override
  public String route() {
    return kind.route();
  }

  @Override
  public Shape errorShape() {
    return kind.errorShape();
  }

  @Override
  public BodyType bodyType() {
    return kind.bodyType();
  }

  @Override
  public long bodyLimit() {
    return kind.bodyLimit(services);
  }

  @Override
  public AccessLine arrived(AccessLine line) {
    return line.withProvider(provider());
  }

  /**
   * The call's data class must allow this route's provider: else 403 {@code data_class_forbidden},
   * before the body is read, so nothing is reserved or sent.
   */
  @Override
  public Optional<Refusal> refusesDataClass(DataClass dataClass, CallMetrics metrics) {
    if (DataClasses.direct(dataClass, kind.provider()) instanceof DataClasses.Forbidden forbidden) {
      metrics.dataClass(dataClass.name(), "forbidden");
      return Optional.of(
          Refusal.of(
              errorShape(),
              403,
              DataClasses.FORBIDDEN,
              forbidden.message(),
              DataClasses.HEADER,
              DataClasses.FORBIDDEN));
    }
    metrics.dataClass(dataClass.name(), "allowed");
    return Optional.empty();
  }

  @Override
  public CompletionStage<Vetted<Preparation.Prepared>> prepare(Call call) {
    return kind.prepare(call.request(), services, call.today()).thenApply(p -> vetted(call, p));
  }

  private Vetted<Preparation.Prepared> vetted(Call call, Preparation preparation) {
    if (preparation instanceof Preparation.Unreadable unreadable) {
      return new Vetted.Refused<>(
          Refusal.of(
              errorShape(),
              unreadable.status(),
              "invalid_request_error",
              unreadable.message(),
              "body",
              unreadable.rule()));
    }
    if (preparation instanceof Preparation.Rejected rejected) {
      String model = loggableModel(rejected.model());
      call.line().learn(l -> l.withModel(model));
      if (rejected.violation().rule().equals("model_retired") && model != null) {
        services.metrics().modelLifecycleAlarm(model, "retired");
      }
      return new Vetted.Refused<>(Refusal.policy(errorShape(), rejected.violation()));
    }
    return new Vetted.Ready<>((Preparation.Prepared) preparation);
  }

  /**
   * A model whose circuit a 410 opened is refused; otherwise the call's one attempt, in its pool
   * ({@code x-priority}).
   */
  @Override
  public CompletionStage<CallEnd> run(Call call, Preparation.Prepared prepared) {
    AccessLine known = call.line().learn(l -> l.withModel(prepared.model()));
    // Deprecated, or active and near its end of support: the same alarm either way.
    if (services.policy().catalog().needsWarning(prepared.modelInfo(), call.today())) {
      services.metrics().modelLifecycleAlarm(prepared.model(), "deprecated");
      call.guards().alarms().modelDeprecatedInUse(prepared.modelInfo(), call.today());
    }
    if (call.guards().circuits().isOpen(prepared.model())) {
      return refused(
          Refusal.of(
              errorShape(),
              410,
              "invalid_request_error",
              "Model '"
                  + prepared.model()
                  + "' answered 410 Gone: "
                  + provider()
                  + " retired it. Calls to it are refused"
                  + " without reaching the provider until its circuit closes or an operator resets it.",
              "model",
              "model_circuit_open"));
    }
    Pool pool =
        call.spend().priority() == SpendHeaders.Priority.BATCH ? Pool.BATCH : Pool.INTERACTIVE;
    List<HttpHeader> callerHeaders = new ArrayList<>();
    call.request().getHeaders().forEach(callerHeaders::add);
    Call.AttemptPlan plan =
        new Call.AttemptPlan(
            kind.provider(),
            prepared.model(),
            prepared.modelInfo(),
            prepared.worstCase(),
            pool,
            known,
            UsageTelemetry.NO_PROFILE,
            new UpstreamExchange.Target(
                kind.provider(),
                prepared.model(),
                kind.upstreamPath(),
                kind.streamKind(),
                kind::usageOfAnswer,
                kind::usageOfStream,
                false,
                true),
            new UpstreamRequest(HttpMethods.POST, callerHeaders, prepared.upstreamBody()),
            held -> {});
    return call.attempt(plan)
        .thenApply(
            attempted -> {
              if (attempted instanceof Call.Attempted.Exchanged exchanged) {
                return new CallEnd.Answered(
                    withWarnings(answer(call, prepared, exchanged.result()), prepared.warnings()),
                    exchanged.attempt(),
                    List.of());
              }
              if (attempted instanceof Call.Attempted.CallerGone gone) {
                return new CallEnd.Answered(gone.refusal().response(), gone.attempt(), List.of());
              }
              return new CallEnd.Refused(((Call.Attempted.Refused) attempted).refusal());
            });
  }

  /** What the caller gets: the provider's answer as it is, or a gateway 502/503. */
  private HttpResponse answer(
      Call call, Preparation.Prepared prepared, UpstreamExchange.Exchanged exchanged) {
    if (exchanged instanceof UpstreamExchange.Exchanged.NoAnswer none
        && new UpstreamResult.ConnectionFailed(none.errorClass()).isOverload()) {
      // Refused for capacity before anything was sent (the attempt voided it): retry shortly.
      return Overload.refusal(errorShape(), none.errorClass(), services.metrics());
    }
    if (exchanged instanceof UpstreamExchange.Exchanged.NoAnswer none
        && none.errorClass().equals("breaker_open")) {
      long retryAfter = Math.max(1, call.guards().breakerRetryAfter().toSeconds());
      return error(
              503,
              "upstream_unavailable",
              provider()
                  + " has been failing: the gateway's circuit breaker for it is"
                  + " open, nothing was sent or billed; retry after "
                  + retryAfter
                  + " s.")
          .addHeader(RawHeader.create("retry-after", Long.toString(retryAfter)));
    }
    if (exchanged instanceof UpstreamExchange.Exchanged.NoAnswer none) {
      return error(
          502,
          "upstream_unavailable",
          "The provider could not be reached (" + none.errorClass() + ").");
    }
    if (exchanged instanceof UpstreamExchange.Exchanged.ErrorStatus refused) {
      if (refused.responded().status() == 410) {
        call.guards()
            .modelGone(
                kind.provider(),
                prepared.model(),
                kind.route(),
                "calls to it are refused until it closes or an operator resets it");
      }
      return passThrough(
          refused.responded(),
          HttpEntities.create(refused.responded().contentType(), refused.body()));
    }
    if (exchanged instanceof UpstreamExchange.Exchanged.Whole whole) {
      return passThrough(
          whole.responded(), HttpEntities.create(whole.responded().contentType(), whole.bytes()));
    }
    if (exchanged instanceof UpstreamExchange.Exchanged.Streaming streaming) {
      streaming.delivered();
      // The usage chunk the gateway asked for is counted; the caller sees it only if it asked.
      return passThrough(
          streaming.responded(),
          HttpEntities.create(
              streaming.responded().contentType(),
              streaming
                  .metered()
                  .toClient()
                  .via(
                      UsageChunkFilter.forCaller(
                          prepared.forwardUsageChunk(),
                          services.upstream().settings().sseLimits()))));
    }
    return error(502, "upstream_unreadable", "The provider's answer could not be read to its end.");
  }

  private static HttpResponse passThrough(
      UpstreamResult.Responded responded, ResponseEntity entity) {
    return HttpResponse.create()
        .withStatus(GatewayErrors.status(responded.status()))
        .addHeaders(responded.headersToPassBack())
        .withEntity(entity);
  }

  private HttpResponse error(int status, String type, String message) {
    return Refusal.of(errorShape(), status, type, message, null, type).response();
  }

  private static CompletionStage<CallEnd> refused(Refusal refusal) {
    return CompletableFuture.completedFuture(new CallEnd.Refused(refusal));
  }

  private static HttpResponse withWarnings(HttpResponse response, List<String> warnings) {
    if (warnings.isEmpty()) {
      return response;
    }
    List<HttpHeader> headers = new ArrayList<>();
    for (String w : warnings) {
      headers.add(RawHeader.create("x-gateway-warning", w));
    }
    return response.addHeaders(headers);
  }

  private static String loggableModel(String requested) {
    if (requested == null) {
      return null;
    }
    return LOGGABLE_MODEL.matcher(requested).matches() ? requested : "(not a model id)";
  }

  private String provider() {
    return kind.provider().wireName();
  }
}
