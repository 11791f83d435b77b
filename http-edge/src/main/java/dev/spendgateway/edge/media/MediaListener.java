package dev.spendgateway.edge.media;

/**
 * What the media routes tell the gateway's meters, handed to {@link MediaRoutes} by the composition
 * root (so the routes know no metrics library and a test can hand in its own).
 */
public interface MediaListener {
  /**
   * This node closed a media job's reservation.
   *
   * @param model the job's model, as the provider named it
   * @param outcome {@code completed} (settled at its billed seconds) or {@code failed} ($0)
   * @param micros what the job was settled at
   */
  void jobClosed(String model, String outcome, long micros);

  /**
   * A submit was answered 429.
   *
   * @param by {@code gateway} (the account had its limit of unfinished jobs: nothing sent or
   *     reserved) or {@code provider} (the provider's own 429, passed through, its hold voided)
   */
  void rateLimited(String by);

  /** Tells nobody. */
  MediaListener NONE =
      new MediaListener() {
        @Override
        public void jobClosed(String model, String outcome, long micros) {}

        @Override
        public void rateLimited(String by) {}
      };
}
