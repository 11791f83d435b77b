package dev.spendgateway.policy.request;

import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.cost.WorstCase;
import java.util.List;
import java.util.Objects;

/** What the request policy decided about one transcription upload. */
public sealed interface TranscriptionDecision
    permits TranscriptionDecision.TranscriptionAllowed, PolicyDecision.Violation {

  /**
   * The upload may go upstream. The edge rebuilds the multipart form from exactly {@code
   * forwardFields}; nothing else the caller sent is forwarded.
   *
   * @param forwardFields the vetted field names, in the caller's order
   * @param model the transcription model id
   * @param modelInfo its catalog entry (per-minute price)
   * @param worstCase the reservation (file duration at the lowest assumed bitrate)
   * @param warnings non-blocking notes (deprecated model)
   */
  record TranscriptionAllowed(
      List<String> forwardFields,
      String model,
      ModelInfo modelInfo,
      WorstCase worstCase,
      List<String> warnings)
      implements TranscriptionDecision {
    public TranscriptionAllowed {
      forwardFields = List.copyOf(forwardFields);
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(modelInfo, "modelInfo");
      Objects.requireNonNull(worstCase, "worstCase");
      warnings = List.copyOf(warnings);
    }
  }
}
