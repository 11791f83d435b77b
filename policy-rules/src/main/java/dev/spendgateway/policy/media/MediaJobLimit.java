package dev.spendgateway.policy.media;

/**
 * How many unfinished video jobs one media account may have. The media provider runs at most five
 * per account at once and answers 429 beyond; the gateway counts them itself so one more submit is
 * told to wait before anything is reserved or sent.
 *
 * @param maxConcurrentJobs unfinished jobs allowed per account ({@code media.max-concurrent-jobs})
 */
public record MediaJobLimit(int maxConcurrentJobs) {
  public MediaJobLimit {
    if (maxConcurrentJobs < 1) {
      throw new IllegalArgumentException("media.max-concurrent-jobs must be >= 1");
    }
  }

  /** Whether an account with {@code unfinished} jobs may submit one more. */
  public boolean admitsAnother(int unfinished) {
    return unfinished < maxConcurrentJobs;
  }
}
