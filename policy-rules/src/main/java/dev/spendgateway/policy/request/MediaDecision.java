package dev.spendgateway.policy.request;

import dev.spendgateway.policy.media.MediaModel;
import java.util.Objects;
import java.util.Optional;

/** What the media policy decided about one video job submit. */
public sealed interface MediaDecision permits MediaDecision.Allowed, PolicyDecision.Violation {

  /**
   * The job may be submitted once its worst case is reserved.
   *
   * @param model the catalog entry
   * @param seconds the clip length the reservation assumes
   * @param size the frame size asked for; empty when the caller left it to the provider, in which
   *     case the dearest size tier is reserved
   * @param microsPerSecond the price the reservation uses
   */
  record Allowed(MediaModel model, int seconds, Optional<String> size, long microsPerSecond)
      implements MediaDecision {
    public Allowed {
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(size, "size");
    }

    /** Seconds × price: what is reserved before anything is sent. */
    public long worstCaseMicros() {
      return Math.multiplyExact(seconds, microsPerSecond);
    }
  }
}
