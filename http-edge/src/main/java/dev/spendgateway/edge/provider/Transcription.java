package dev.spendgateway.edge.provider;

import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.policy.request.TranscriptionDecision;
import dev.spendgateway.policy.request.TranscriptionForm;
import dev.spendgateway.upstream.client.UpstreamBody;
import dev.spendgateway.upstream.usage.ApiKind;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.Multipart;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.util.ByteString;

/**
 * {@code POST /openai/v1/audio/transcriptions}: the caller's multipart form (anything but {@code
 * multipart/form-data} is a 415 before it is read, see {@link #bodyType}) is read (bounded by the
 * transcription file limit), vetted, and rebuilt from the five vetted fields only — nothing else
 * the caller sent reaches the provider.
 */
enum Transcription implements CallKind {
  INSTANCE;

  /** Form overhead allowed on top of the file limit (boundaries, part headers, the text fields). */
  private static final long FORM_OVERHEAD_BYTES = 64 * 1024;

  @Override
  public ApiKind api() {
    return ApiKind.OPENAI_TRANSCRIPTIONS;
  }

  @Override
  public BodyType bodyType() {
    return BodyType.FORM_DATA;
  }

  @Override
  public Optional<ApiKind> streamKind() {
    return Optional.empty();
  }

  @Override
  public long bodyLimit(CallServices services) {
    return services.policy().limits().transcriptionMaxFileBytes() + FORM_OVERHEAD_BYTES;
  }

  @Override
  public CompletionStage<Preparation> prepare(
      HttpRequest request, CallServices services, LocalDate today) {
    long limit = bodyLimit(services);
    return CallerBodies.readStrict(
            request.entity(), limit, services.bodyReadTimeout().toMillis(), services.materializer())
        .thenCompose(body -> prepareBody(request, body, services, today));
  }

  private CompletionStage<Preparation> prepareBody(
      HttpRequest request, CallerBodies.Body body, CallServices services, LocalDate today) {
    if (body instanceof CallerBodies.TooLarge tooLarge) {
      return CompletableFuture.completedFuture(tooLarge(tooLarge.limitBytes()));
    }
    if (body instanceof CallerBodies.Unreadable unreadable) {
      return CompletableFuture.completedFuture(Preparation.Unreadable.of(unreadable));
    }
    return readForm(request, ((CallerBodies.Read) body).bytes(), services)
        .thenApply(form -> vet(form, services, today))
        .exceptionally(failure -> malformed());
  }

  /** The bytes read as a form; fails when they are not one (truncated, a wrong boundary, …). */
  private CompletionStage<Multipart.FormData.Strict> readForm(
      HttpRequest request, ByteString bytes, CallServices services) {
    HttpEntity.Strict strict = HttpEntities.create(request.entity().getContentType(), bytes);
    return Unmarshaller.entityToMultipartFormData()
        .unmarshal(strict, services.materializer())
        .thenCompose(
            form -> form.toStrict(services.bodyReadTimeout().toMillis(), services.materializer()));
  }

  private static Preparation tooLarge(long limitBytes) {
    return Dialect.rejected(
        "max_file_bytes",
        "file",
        "The upload is larger than the gateway's limit of " + limitBytes + " bytes.",
        413,
        null);
  }

  /**
   * Truncated, a wrong boundary, a missing closing delimiter: not a form the gateway can rebuild.
   */
  private static Preparation malformed() {
    return Dialect.rejected(
        "multipart",
        "body",
        "The upload is not a well-formed multipart/form-data body.",
        400,
        null);
  }

  private Preparation vet(Multipart.FormData.Strict form, CallServices services, LocalDate today) {
    List<TranscriptionForm.Part> parts = new ArrayList<>();
    Map<String, Multipart.FormData.BodyPart.Strict> byName = new HashMap<>();
    for (Multipart.FormData.BodyPart.Strict part : form.getStrictParts()) {
      ByteString data = part.getEntity().getData();
      boolean file = isFile(part);
      parts.add(
          file
              ? TranscriptionForm.Part.file(part.getName(), data.size())
              : TranscriptionForm.Part.text(
                  part.getName(), data.decodeString(StandardCharsets.UTF_8)));
      byName.putIfAbsent(part.getName(), part);
    }
    TranscriptionDecision decision;
    try {
      decision = services.policy().openAiTranscription(new TranscriptionForm(parts), today);
    } catch (IllegalArgumentException malformedForm) {
      return Dialect.rejected(
          "multipart",
          "body",
          "The multipart form is malformed: " + malformedForm.getMessage(),
          400,
          null);
    }
    if (decision instanceof PolicyDecision.Violation v) {
      return new Preparation.Rejected(v, null);
    }
    TranscriptionDecision.TranscriptionAllowed allowed =
        (TranscriptionDecision.TranscriptionAllowed) decision;
    List<Multipart.FormData.BodyPart.Strict> vetted = new ArrayList<>();
    for (String name : allowed.forwardFields()) {
      vetted.add(rebuilt(byName.get(name)));
    }
    Multipart.FormData.Strict rebuilt =
        org.apache.pekko.http.javadsl.model.Multiparts.createStrictFormDataFromParts(
            vetted.toArray(Multipart.FormData.BodyPart.Strict[]::new));
    HttpEntity.Strict entity = rebuilt.toEntity();
    UpstreamBody body = new UpstreamBody.Strict(entity.getContentType(), entity.getData());
    return new Preparation.Prepared(
        allowed.model(), allowed.modelInfo(), allowed.worstCase(), allowed.warnings(), body);
  }

  /**
   * A part is a file when it names a filename or carries a non-text body: the OpenAI Java SDK sends
   * audio given as bytes or a stream without a filename, as {@code application/octet-stream}.
   */
  private static boolean isFile(Multipart.FormData.BodyPart.Strict part) {
    return part.getFilename().isPresent()
        || !part.getEntity().getContentType().mediaType().mainType().equalsIgnoreCase("text");
  }

  /**
   * A fresh part carrying only the name, the filename (OpenAI reads the format from it) and data.
   */
  private static Multipart.FormData.BodyPart.Strict rebuilt(
      Multipart.FormData.BodyPart.Strict part) {
    Map<String, String> disposition =
        part.getFilename().map(f -> Map.of("filename", f)).orElse(Map.of());
    return org.apache.pekko.http.javadsl.model.Multiparts.createFormDataBodyPartStrict(
        part.getName(), part.getEntity(), disposition);
  }
}
