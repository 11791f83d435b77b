package dev.spendgateway.edge.media;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.call.BudgetRefusal;
import dev.spendgateway.edge.call.Call;
import dev.spendgateway.edge.call.CallEnd;
import dev.spendgateway.edge.call.CallMetrics;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.call.CallTarget;
import dev.spendgateway.edge.call.CallerJsonBody;
import dev.spendgateway.edge.call.Refusal;
import dev.spendgateway.edge.call.SpendHeaders.SpendContext;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.request.MediaDecision;
import dev.spendgateway.policy.request.MediaRules;
import dev.spendgateway.policy.request.PolicyDecision;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;

/**
 * {@code POST /media/v1/videos} on the one call pipeline (spend headers, data class, body limits,
 * access line): the policy prices the job, the ledger reserves it (or says the account has its
 * limit of unfinished jobs, before anything is sent), then the provider gets the submit and the
 * ledger the job's id.
 */
final class MediaSubmit implements CallTarget<MediaSubmit.Prepared> {
  static final String ROUTE = "/media/v1/videos";
  static final String IDEMPOTENCY_KEY = "idempotency-key";

  /**
   * The provider a media job's reservation is journaled with, as the media routes' access lines
   * name it: the media provider is an upstream of its own ({@code media.base-url}), whatever API it
   * speaks.
   */
  static final String PROVIDER = "media";

  private static final int MAX_IDEMPOTENCY_KEY_CHARS = 256;

  /**
   * Submits of one key the provider may refuse (429) before the key is answered 409: a workflow's
   * 12 tries of a clip fit many times over, and a ledger lookup per earlier try stays cheap.
   */
  private static final int MAX_KEY_ATTEMPTS = 64;

  /** Form framing and text fields allowed on top of the image's limit. */
  private static final long FORM_OVERHEAD_BYTES = 64 * 1024;

  private final MediaRoutes.Parts parts;
  private final CallServices services;

  MediaSubmit(MediaRoutes.Parts parts, CallServices services) {
    this.parts = parts;
    this.services = services;
  }

  /**
   * A vetted submit: what is sent to the provider (a JSON body as it came, or the form rebuilt from
   * its vetted parts only) and what the policy priced.
   */
  record Prepared(HttpEntity.Strict body, MediaDecision.Allowed allowed) {}

  @Override
  public String route() {
    return ROUTE;
  }

  @Override
  public Shape errorShape() {
    return Shape.OPENAI;
  }

  @Override
  public BodyType bodyType() {
    return BodyType.JSON_OR_FORM_DATA;
  }

  /** The larger of the two bodies: a JSON one is still read within the JSON limit. */
  @Override
  public long bodyLimit() {
    return Math.max(services.policy().limits().maxBodyBytes(), formLimit());
  }

  /** A form: its image within the policy's file limit, plus its text fields and framing. */
  private long formLimit() {
    return services.policy().limits().transcriptionMaxFileBytes() + FORM_OVERHEAD_BYTES;
  }

  /**
   * The media provider speaks OpenAI's Videos API and is treated as OpenAI here: a data class that
   * may not go to OpenAI may not go to the media provider either.
   */
  @Override
  public Optional<Refusal> refusesDataClass(DataClass dataClass, CallMetrics metrics) {
    if (DataClasses.direct(dataClass, Provider.OPENAI) instanceof DataClasses.Forbidden forbidden) {
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
  public CompletionStage<Vetted<Prepared>> prepare(Call call) {
    if (BodyType.FORM_DATA.accepts(call.request().entity())
        && !call.request().entity().isKnownEmpty()) {
      return MediaForm.read(call.request().entity(), formLimit(), services)
          .thenApply(read -> vetForm(call, read));
    }
    return CallerJsonBody.read(call.request().entity(), services)
        .thenApply(
            read -> {
              if (read instanceof CallerJsonBody.Refused r) {
                return new Vetted.Refused<>(
                    Refusal.of(
                        errorShape(),
                        r.status(),
                        "invalid_request_error",
                        r.message(),
                        r.field(),
                        r.errorClass()));
              }
              CallerJsonBody.Json json = (CallerJsonBody.Json) read;
              MediaDecision d = parts.rules().check(MediaRules.Submit.fromJson(json.object()));
              if (d instanceof PolicyDecision.Violation v) {
                return new Vetted.Refused<>(Refusal.policy(errorShape(), v));
              }
              MediaDecision.Allowed allowed = (MediaDecision.Allowed) d;
              call.line().learn(l -> l.withModel(allowed.model().name()));
              return new Vetted.Ready<>(
                  new Prepared(
                      HttpEntities.create(ContentTypes.APPLICATION_JSON, json.bytes()), allowed));
            });
  }

  /** A form read: refused as it was refused, or vetted by the same policy as a JSON submit. */
  private Vetted<Prepared> vetForm(Call call, MediaForm.Read read) {
    if (read instanceof MediaForm.Refused r) {
      return new Vetted.Refused<>(
          Refusal.of(
              errorShape(), r.status(), "invalid_request_error", r.message(), r.field(), r.rule()));
    }
    MediaForm.Form form = (MediaForm.Form) read;
    MediaDecision d = parts.rules().check(form.submit());
    if (d instanceof PolicyDecision.Violation v) {
      return new Vetted.Refused<>(Refusal.policy(errorShape(), v));
    }
    MediaDecision.Allowed allowed = (MediaDecision.Allowed) d;
    call.line().learn(l -> l.withModel(allowed.model().name()));
    return new Vetted.Ready<>(new Prepared(form.rebuilt(), allowed));
  }

  @Override
  public CompletionStage<CallEnd> run(Call call, Prepared prepared) {
    Optional<String> key =
        call.request().getHeader(IDEMPOTENCY_KEY).map(HttpHeader::value).map(String::strip);
    if (key.isPresent()
        && (key.get().isEmpty() || key.get().length() > MAX_IDEMPOTENCY_KEY_CHARS)) {
      return refused(
          Refusal.of(
              errorShape(),
              400,
              "invalid_request_error",
              "The idempotency-key header must hold 1 to "
                  + MAX_IDEMPOTENCY_KEY_CHARS
                  + " characters.",
              IDEMPOTENCY_KEY,
              "bad_header"));
    }
    return reserve(call, prepared, key, 0);
  }

  /**
   * Holds the job's worst case under the reservation id of {@code key}'s {@code attempt} (a fresh
   * id without a key), then goes on as the ledger answers.
   */
  private CompletionStage<CallEnd> reserve(
      Call call, Prepared prepared, Optional<String> key, int attempt) {
    SpendContext spend = call.spend();
    String reservationId = key.map(k -> keyedId(spend, k, attempt)).orElseGet(Owner::newGatewayId);
    long worstCase = prepared.allowed().worstCaseMicros();
    MediaSettings settings = parts.settings();
    return services
        .ledger()
        .reserveMediaJob(
            spend
                .reserve(reservationId, worstCase)
                .forModel(prepared.allowed().model().name(), PROVIDER),
            settings.account(),
            key.orElse(null),
            settings.maxConcurrentJobs(),
            settings.reservationLifetime())
        .handle((reply, failure) -> reply)
        .thenCompose(
            reply -> {
              if (reply instanceof LedgerProtocol.MediaJobClosed closed
                  && closed.jobId() == null
                  && closed.status() == Status.VOIDED
                  && key.isPresent()
                  && attempt + 1 < MAX_KEY_ATTEMPTS) {
                // The key's last submit made no job (the provider answered 429 or refused it, and
                // its hold was voided): a retry with the same key is a new submit, under the key's
                // next reservation id, so a workflow retrying a clip under its key gets it made.
                return reserve(call, prepared, key, attempt + 1);
              }
              return onReserve(call, prepared, reservationId, reply, worstCase);
            });
  }

  /**
   * The reservation id of a keyed submit: the same key of the same caller (lane and brand) always
   * names the same reservation, which is what makes a repeat answer the first job. {@code attempt}
   * counts the key's submits the provider made no job for (each voided), so each retry has an id of
   * its own while a made job keeps answering under its one.
   */
  private String keyedId(SpendContext spend, String key, int attempt) {
    byte[] digest =
        MediaSettings.sha256(
            parts.settings().account()
                + "\n"
                + spend.lane().wireName()
                + "\n"
                + (spend.subject() == null ? "" : spend.subject())
                + "\n"
                + key);
    String id = Owner.GATEWAY_ID_PREFIX + "media-" + HexFormat.of().formatHex(digest, 0, 16);
    return attempt == 0 ? id : id + "-" + attempt;
  }

  private CompletionStage<CallEnd> onReserve(
      Call call,
      Prepared prepared,
      String reservationId,
      LedgerProtocol.MediaReserveReply reply,
      long worstCase) {
    if (reply instanceof LedgerProtocol.MediaJobsFull full) {
      parts.listener().rateLimited("gateway");
      long retryAfter = Math.max(1, parts.settings().retryAfter().toSeconds());
      return refused(
          Refusal.tooManyRequests(
              errorShape(),
              "The media account has "
                  + full.unfinished()
                  + " unfinished jobs, its limit; nothing was sent or reserved, retry after "
                  + retryAfter
                  + " s.",
              retryAfter,
              "rate_limited"));
    }
    if (reply instanceof LedgerProtocol.MediaJobRefused r) {
      BudgetRefusal b = BudgetRefusal.of(errorShape(), r.refused(), worstCase);
      return refused(new Refusal(b.response(), b.errorClass()));
    }
    if (reply instanceof LedgerProtocol.MediaJobClosed closed && closed.jobId() != null) {
      // The keyed job ended within the idempotency window: the caller (a workflow resuming after a
      // restart) gets that job back as a poll answers it, and nothing is submitted or reserved.
      return parts.answerJob(closed.jobId(), reservationId).thenApply(this::answered);
    }
    if (reply instanceof LedgerProtocol.MediaJobClosed closed) {
      // Closed without a job and not voided (it expired: the provider never answered the submit,
      // so a job may exist and run), or the key's tries are used up: not submitted again.
      return refused(
          conflict(
              "The job submitted with this idempotency-key has ended ("
                  + closed.status().wireName()
                  + "); it is not submitted again. Use a new key for a new job.",
              "idempotency_key_used"));
    }
    if (reply instanceof LedgerProtocol.MediaJobNotReserved n) {
      return refused(conflict(n.message(), n.reason()));
    }
    if (reply instanceof LedgerProtocol.MediaJobReserved held) {
      call.line().learn(l -> l.withReserved(held.amountMicros()));
      if (!held.fresh()) {
        return held.jobId() == null
            ? refused(
                conflict(
                    "The first submit with this idempotency-key is not answered yet; poll again"
                        + " shortly. It is never submitted twice.",
                    "idempotency_in_progress"))
            : parts.answerJob(held.jobId(), reservationId).thenApply(this::answered);
      }
      return submit(call, prepared, reservationId);
    }
    // No answer from the ledger (timeout, unavailable): nothing was sent. A command the ledger
    // reaches after its deadline is dropped unwritten.
    BudgetRefusal b = BudgetRefusal.of(errorShape(), null, worstCase);
    return refused(new Refusal(b.response(), b.errorClass()));
  }

  private CompletionStage<CallEnd> submit(Call call, Prepared prepared, String reservationId) {
    return parts
        .upstream()
        .submit(prepared.body())
        .handle(
            (answer, failure) -> {
              if (failure != null) {
                // The provider may have made the job: the reservation stays at its worst case
                // until it expires, never a job that runs unpaid.
                return CompletableFuture.completedFuture(
                    (CallEnd)
                        new CallEnd.Refused(
                            Refusal.of(
                                errorShape(),
                                502,
                                "upstream_unavailable",
                                "The media provider did not answer the submit; its worst case"
                                    + " stays reserved until the job is known or expires.",
                                null,
                                "upstream_unavailable")));
              }
              if (!answer.ok()) {
                // The provider made no job (a 429 under load, a refusal): nothing to pay for.
                services.ledger().voidReservation(reservationId);
                if (answer.status() == 429) {
                  parts.listener().rateLimited("provider");
                }
                return CompletableFuture.completedFuture(
                    answered(parts.passThrough(answer), "upstream_" + answer.status()));
              }
              Optional<JsonNode> job = parts.json(answer.body());
              String providerId =
                  job.map(j -> j.path("id").asText("")).filter(s -> !s.isEmpty()).orElse(null);
              if (providerId == null) {
                return CompletableFuture.completedFuture(
                    (CallEnd)
                        new CallEnd.Refused(
                            Refusal.of(
                                errorShape(),
                                502,
                                "upstream_invalid",
                                "The media provider's answer named no job id.",
                                null,
                                "upstream_invalid")));
              }
              return services
                  .ledger()
                  .recordMediaJob(reservationId, providerId)
                  .handle((recorded, ignored) -> recorded)
                  .thenApply(
                      recorded ->
                          answered(
                              parts.jobAnswer(
                                  200, (ObjectNode) job.get(), providerId, reservationId)));
            })
        .thenCompose(s -> s);
  }

  private Refusal conflict(String message, String errorClass) {
    return Refusal.of(
        errorShape(), 409, "invalid_request_error", message, IDEMPOTENCY_KEY, errorClass);
  }

  private CallEnd answered(org.apache.pekko.http.javadsl.model.HttpResponse response) {
    return answered(response, null);
  }

  /** An answer the gateway hands over itself: the call's own line records it. */
  private CallEnd answered(
      org.apache.pekko.http.javadsl.model.HttpResponse response, String errorClass) {
    return new CallEnd.Refused(new Refusal(response, errorClass));
  }

  private static CompletionStage<CallEnd> refused(Refusal refusal) {
    return CompletableFuture.completedFuture(new CallEnd.Refused(refusal));
  }
}
