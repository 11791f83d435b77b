package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.media.MediaCatalog;
import dev.spendgateway.policy.media.MediaModel;
import java.math.BigDecimal;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The policy for a video job submit, and the price of a finished job. Pure: the edge hands in the
 * request's fields (JSON or form), the catalog and the upload limit, and gets a decision.
 */
public final class MediaRules {
  private final MediaCatalog catalog;
  private final long maxInputReferenceBytes;

  /**
   * @param maxInputReferenceBytes the largest {@code input_reference} image; the policy's file
   *     limit, the same one uploads of audio have
   */
  public MediaRules(MediaCatalog catalog, long maxInputReferenceBytes) {
    if (maxInputReferenceBytes <= 0) {
      throw new IllegalArgumentException("maxInputReferenceBytes must be > 0");
    }
    this.catalog = catalog;
    this.maxInputReferenceBytes = maxInputReferenceBytes;
  }

  public MediaCatalog catalog() {
    return catalog;
  }

  /**
   * The fields of a submit as the provider reads them.
   *
   * @param model {@code model}
   * @param prompt {@code prompt}
   * @param seconds {@code seconds} as sent: a string such as {@code "8"} (what the provider sends
   *     back) or a number
   * @param size {@code size}
   * @param inputReferenceBytes the size of a multipart {@code input_reference} image, if any
   */
  public record Submit(
      Optional<String> model,
      Optional<String> prompt,
      Optional<JsonNode> seconds,
      Optional<String> size,
      OptionalLong inputReferenceBytes,
      java.util.List<String> fields) {

    public Submit {
      fields = java.util.List.copyOf(fields);
    }

    /** The fields of a JSON body; a field of the wrong type is kept so the check can name it. */
    public static Submit fromJson(JsonNode body) {
      return new Submit(
          text(body, "model"),
          text(body, "prompt"),
          Optional.ofNullable(body.get("seconds")).filter(n -> !n.isNull()),
          text(body, "size"),
          OptionalLong.empty(),
          names(body));
    }

    private static java.util.List<String> names(JsonNode body) {
      java.util.List<String> out = new java.util.ArrayList<>();
      body.fieldNames().forEachRemaining(out::add);
      return out;
    }

    private static Optional<String> text(JsonNode body, String field) {
      JsonNode v = body.get(field);
      return v == null || v.isNull() ? Optional.empty() : Optional.of(v.asText());
    }
  }

  /** The submit fields the provider documents; anything else is refused, never forwarded. */
  public static final java.util.List<String> FIELDS =
      java.util.List.of("model", "prompt", "seconds", "size", "input_reference");

  public MediaDecision check(Submit submit) {
    for (String f : submit.fields()) {
      if (!FIELDS.contains(f)) {
        return violation(
            "unknown_field",
            f,
            "Field '" + f + "' is not accepted on a video job; the fields are " + FIELDS + ".");
      }
    }
    if (submit.model().isEmpty() || submit.model().get().isBlank()) {
      return violation("media_model_required", "model", "A video job needs a 'model'.");
    }
    Optional<MediaModel> model = catalog.find(submit.model().get());
    if (model.isEmpty()) {
      return violation(
          "model_allow_list",
          "model",
          "Model '"
              + submit.model().get()
              + "' is not in the media catalog; choose one of "
              + catalog.names()
              + ".");
    }
    MediaModel m = model.get();
    if (submit.prompt().isEmpty() || submit.prompt().get().isBlank()) {
      return violation("media_prompt_required", "prompt", "A video job needs a 'prompt'.");
    }
    Optional<Long> sizePrice = Optional.empty();
    if (submit.size().isPresent()) {
      sizePrice = m.microsPerSecond(submit.size().get());
      if (sizePrice.isEmpty()) {
        return violation(
            "media_size",
            "size",
            "Size '"
                + submit.size().get()
                + "' is not offered for "
                + m.name()
                + "; choose one of "
                + m.sizes()
                + ".");
      }
    }
    int seconds;
    if (submit.seconds().isPresent()) {
      OptionalInt parsed = seconds(submit.seconds().get());
      if (parsed.isEmpty() || !m.allows(parsed.getAsInt())) {
        return violation(
            "media_seconds",
            "seconds",
            "'seconds' must be one of "
                + m.allowedSeconds()
                + " for "
                + m.name()
                + " (a string such as \"8\" or a number).");
      }
      seconds = parsed.getAsInt();
    } else {
      // The provider picks the length when none is named; reserve the longest it could pick.
      seconds = m.longestSeconds();
    }
    if (submit.inputReferenceBytes().isPresent()
        && submit.inputReferenceBytes().getAsLong() > maxInputReferenceBytes) {
      return new PolicyDecision.Violation(
          "file_size",
          "input_reference",
          "The 'input_reference' image is larger than the "
              + maxInputReferenceBytes
              + "-byte limit (rule file_size)",
          413);
    }
    return new MediaDecision.Allowed(
        m, seconds, submit.size(), sizePrice.orElseGet(m::dearestMicrosPerSecond));
  }

  /**
   * What a finished job costs: its billed seconds (the job's own {@code seconds}) at its size's
   * price, or the reserved price when the job reports a size the catalog does not know (the safe
   * side). A failed job is billed nothing.
   *
   * @param reserved what the submit reserved
   * @param job the provider's job object
   * @return micro-dollars, or empty when the job has not finished (queued or in progress)
   */
  public static OptionalLong billedMicros(MediaDecision.Allowed reserved, JsonNode job) {
    String status = job.path("status").asText("");
    if (status.equals("failed")) {
      return OptionalLong.of(0);
    }
    if (!status.equals("completed")) {
      return OptionalLong.empty();
    }
    OptionalInt billed = seconds(job.path("seconds"));
    int seconds = billed.isPresent() ? billed.getAsInt() : reserved.seconds();
    long perSecond =
        reserved
            .model()
            .microsPerSecond(job.path("size").asText(""))
            .orElse(reserved.microsPerSecond());
    return OptionalLong.of(Math.multiplyExact(seconds, perSecond));
  }

  /**
   * What a finished job costs when only its reservation's amount is known (a job seen after a
   * restart, or by another node): its billed seconds at the catalog price of its model and size;
   * the reserved amount when the job names a model, size or length the catalog cannot price (the
   * safe side); 0 when it failed; empty while it runs.
   */
  public static OptionalLong billedMicros(MediaCatalog catalog, JsonNode job, long reservedMicros) {
    String status = job.path("status").asText("");
    if (status.equals("failed")) {
      return OptionalLong.of(0);
    }
    if (!status.equals("completed")) {
      return OptionalLong.empty();
    }
    Optional<Long> perSecond =
        catalog
            .find(job.path("model").asText(""))
            .flatMap(m -> m.microsPerSecond(job.path("size").asText("")));
    OptionalInt seconds = seconds(job.path("seconds"));
    if (perSecond.isEmpty() || seconds.isEmpty()) {
      return OptionalLong.of(reservedMicros);
    }
    return OptionalLong.of(Math.multiplyExact(seconds.getAsInt(), perSecond.get()));
  }

  /** {@code "8"} or {@code 8} (or {@code 8.0}); anything else is not a clip length. */
  static OptionalInt seconds(JsonNode value) {
    if (value == null || !(value.isTextual() || value.isNumber())) {
      return OptionalInt.empty();
    }
    try {
      int n = new BigDecimal(value.asText().trim()).intValueExact();
      return n > 0 ? OptionalInt.of(n) : OptionalInt.empty();
    } catch (NumberFormatException | ArithmeticException e) {
      return OptionalInt.empty();
    }
  }

  private static PolicyDecision.Violation violation(String rule, String field, String message) {
    return new PolicyDecision.Violation(rule, field, message + " (rule " + rule + ")", 400);
  }
}
