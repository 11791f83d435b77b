package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.ModelKind;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.WorstCaseEstimator;
import dev.spendgateway.policy.request.TranscriptionDecision.TranscriptionAllowed;
import dev.spendgateway.policy.request.TranscriptionForm.Part;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Policy of {@code POST /openai/v1/audio/transcriptions}. The edge rebuilds the form from the five
 * vetted fields only; any other field is refused (not silently dropped), so a caller never believes
 * a setting was applied when it was not.
 */
final class TranscriptionRules {
  static final String ROUTE = "/openai/v1/audio/transcriptions";

  /** The five fields sent on, in the order OpenAI documents them. */
  static final List<String> VETTED_FIELDS =
      List.of("file", "model", "language", "prompt", "response_format");

  static final Set<String> RESPONSE_FORMATS = Set.of("json", "text", "srt", "verbose_json", "vtt");

  private final ModelCatalog catalog;
  private final PolicyLimits limits;
  private final WorstCaseEstimator estimator;

  TranscriptionRules(ModelCatalog catalog, PolicyLimits limits) {
    this.catalog = catalog;
    this.limits = limits;
    this.estimator = WorstCaseEstimator.of(limits);
  }

  TranscriptionAllowed check(TranscriptionForm form, LocalDate today) {
    List<String> forward = checkFieldNames(form);
    Part file = checkFile(form);
    List<String> warnings = new ArrayList<>();
    Part modelPart =
        form.part("model")
            .orElseThrow(
                () -> Refusal.of("model_required", "model", "form field 'model' is required"));
    if (modelPart.file()) {
      throw Refusal.of("form_field_type", "model", "form field 'model' must be text, not a file");
    }
    ModelInfo model =
        BodyRules.checkModel(
            TextNode.valueOf(modelPart.value()),
            "model",
            catalog,
            Provider.OPENAI,
            ModelKind.TRANSCRIPTION,
            today,
            warnings);
    for (String textField : List.of("language", "prompt", "response_format")) {
      form.part(textField)
          .filter(Part::file)
          .ifPresent(
              p -> {
                throw Refusal.of(
                    "form_field_type",
                    textField,
                    "form field '" + textField + "' must be text, not a file");
              });
    }
    form.part("response_format")
        .filter(p -> !RESPONSE_FORMATS.contains(p.value()))
        .ifPresent(
            p -> {
              throw Refusal.of(
                  "response_format",
                  "response_format",
                  "form field 'response_format' may be one of "
                      + String.join(", ", new TreeSet<>(RESPONSE_FORMATS)));
            });
    return new TranscriptionAllowed(
        forward, model.name(), model, estimator.transcription(model, file.sizeBytes()), warnings);
  }

  private static List<String> checkFieldNames(TranscriptionForm form) {
    Set<String> seen = new HashSet<>();
    List<String> forward = new ArrayList<>();
    for (Part part : form.parts()) {
      if (!VETTED_FIELDS.contains(part.name())) {
        throw Refusal.of(
            "transcription_fields",
            part.name(),
            "form field '"
                + part.name()
                + "' is not forwarded by the gateway; allowed fields: "
                + String.join(", ", VETTED_FIELDS));
      }
      if (!seen.add(part.name())) {
        throw Refusal.of(
            "transcription_fields",
            part.name(),
            "form field '" + part.name() + "' appears more than once");
      }
      forward.add(part.name());
    }
    return forward;
  }

  private Part checkFile(TranscriptionForm form) {
    Part file =
        form.part("file")
            .orElseThrow(
                () -> Refusal.of("file_required", "file", "form field 'file' is required"));
    if (!file.file() || file.sizeBytes() == 0) {
      throw Refusal.of(
          "file_required", "file", "form field 'file' must be a non-empty file upload");
    }
    if (file.sizeBytes() > limits.transcriptionMaxFileBytes()) {
      throw Refusal.tooLarge(
          "file_size",
          "file",
          "audio file is "
              + file.sizeBytes()
              + " bytes; the gateway accepts at most "
              + limits.transcriptionMaxFileBytes()
              + " bytes");
    }
    return file;
  }
}
