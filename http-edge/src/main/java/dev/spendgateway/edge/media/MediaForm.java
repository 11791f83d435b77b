package dev.spendgateway.edge.media;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.policy.request.MediaRules;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.Multipart;
import org.apache.pekko.http.javadsl.model.Multiparts;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.util.ByteString;

/**
 * A video submit sent as a multipart form, the way the provider takes an {@code input_reference}
 * image: read within the image's limit, its fields handed to the same policy as a JSON submit (the
 * image by its size only), and the form rebuilt from the vetted parts alone, so nothing else the
 * caller sent reaches the provider.
 */
final class MediaForm {
  static final String INPUT_REFERENCE = "input_reference";

  private MediaForm() {}

  /** What reading the form gave. */
  sealed interface Read permits Form, Refused {}

  /** A well-formed form: its fields as the policy reads them, and the form to send if it passes. */
  record Form(MediaRules.Submit submit, HttpEntity.Strict rebuilt) implements Read {}

  /** Not a form the gateway can vet: the status, the field it names, and the rule. */
  record Refused(int status, String field, String message, String rule) implements Read {}

  static CompletionStage<Read> read(RequestEntity entity, long limit, CallServices services) {
    long timeout = services.bodyReadTimeout().toMillis();
    return CallerBodies.readStrict(entity, limit, timeout, services.materializer())
        .thenCompose(
            body -> {
              if (body instanceof CallerBodies.TooLarge tooLarge) {
                return done(
                    new Refused(
                        413,
                        INPUT_REFERENCE,
                        "The upload is larger than the gateway's limit of "
                            + tooLarge.limitBytes()
                            + " bytes for a video submit with an 'input_reference' image (rule"
                            + " file_size).",
                        "file_size"));
              }
              if (body instanceof CallerBodies.Unreadable u) {
                return done(new Refused(u.status(), "body", u.message(), u.rule()));
              }
              ByteString bytes = ((CallerBodies.Read) body).bytes();
              HttpEntity.Strict strict = HttpEntities.create(entity.getContentType(), bytes);
              return Unmarshaller.entityToMultipartFormData()
                  .unmarshal(strict, services.materializer())
                  .thenCompose(form -> form.toStrict(timeout, services.materializer()))
                  .thenApply(MediaForm::fields)
                  .exceptionally(
                      failure ->
                          new Refused(
                              400,
                              "body",
                              "The upload is not a well-formed multipart/form-data body.",
                              "multipart"));
            });
  }

  /** The form's parts as a submit; every name once, text fields as text, the image as a file. */
  static Read fields(Multipart.FormData.Strict form) {
    Map<String, Multipart.FormData.BodyPart.Strict> byName = new LinkedHashMap<>();
    for (Multipart.FormData.BodyPart.Strict part : form.getStrictParts()) {
      if (byName.putIfAbsent(part.getName(), part) != null) {
        return new Refused(
            400,
            part.getName(),
            "Field '" + part.getName() + "' is sent twice; send each field once.",
            "duplicate_field");
      }
    }
    OptionalLong imageBytes = OptionalLong.empty();
    Map<String, String> text = new LinkedHashMap<>();
    for (Multipart.FormData.BodyPart.Strict part : byName.values()) {
      String name = part.getName();
      if (name.equals(INPUT_REFERENCE)) {
        if (!isFile(part)) {
          return new Refused(
              400,
              INPUT_REFERENCE,
              "'input_reference' must be an image file part (e.g. curl -F"
                  + " input_reference=@frame.png), not a text field.",
              "media_input_reference");
        }
        imageBytes = OptionalLong.of(part.getEntity().getData().size());
      } else if (isFile(part)) {
        return new Refused(
            400,
            name,
            "Field '" + name + "' must be a text field; only 'input_reference' may be a file.",
            "media_form_field");
      } else {
        text.put(name, part.getEntity().getData().decodeString(StandardCharsets.UTF_8));
      }
    }
    MediaRules.Submit submit =
        new MediaRules.Submit(
            Optional.ofNullable(text.get("model")),
            Optional.ofNullable(text.get("prompt")),
            Optional.ofNullable(text.get("seconds")).map(s -> (JsonNode) TextNode.valueOf(s)),
            Optional.ofNullable(text.get("size")),
            imageBytes,
            List.copyOf(byName.keySet()));
    return new Form(submit, rebuilt(byName));
  }

  /**
   * The parts the provider documents, each rebuilt with its name, its filename (the provider reads
   * the image's format from it) and its bytes; any other part is left out (the policy refuses a
   * form that has one before this is sent).
   */
  private static HttpEntity.Strict rebuilt(Map<String, Multipart.FormData.BodyPart.Strict> byName) {
    List<Multipart.FormData.BodyPart.Strict> kept = new ArrayList<>();
    for (String name : MediaRules.FIELDS) {
      Multipart.FormData.BodyPart.Strict part = byName.get(name);
      if (part != null) {
        Map<String, String> disposition =
            part.getFilename().map(f -> Map.of("filename", f)).orElse(Map.of());
        kept.add(Multiparts.createFormDataBodyPartStrict(name, part.getEntity(), disposition));
      }
    }
    return Multiparts.createStrictFormDataFromParts(
            kept.toArray(Multipart.FormData.BodyPart.Strict[]::new))
        .toEntity();
  }

  /** A file part names a filename or carries a body that is not text. */
  private static boolean isFile(Multipart.FormData.BodyPart.Strict part) {
    return part.getFilename().isPresent()
        || !part.getEntity().getContentType().mediaType().mainType().equalsIgnoreCase("text");
  }

  private static CompletionStage<Read> done(Read read) {
    return CompletableFuture.completedFuture(read);
  }
}
