package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The video jobs the simulator runs, in the shape of OpenAI's Videos API. A job's status follows
 * from the clock: {@code queued} for the queue time, {@code in_progress} for the run time, then
 * {@code completed} or {@code failed} as the settings said when it was created. Nothing runs in the
 * background, so a simulator with a thousand open jobs costs nothing between polls.
 *
 * <p>Like the real media provider, each account (the API key) may have at most {@code
 * maxConcurrent} unfinished jobs; one more is refused with a 429. Memory stays bounded: past {@link
 * #MAX_JOBS} jobs the oldest is forgotten.
 */
final class MediaJobs {
  /** How many jobs are remembered; a week of simulated traffic must not grow without bound. */
  static final int MAX_JOBS = 10_000;

  /**
   * How the next jobs behave.
   *
   * @param queueFor how long a job waits as {@code queued}
   * @param runFor how long it then runs as {@code in_progress}
   * @param fail whether it ends {@code failed} (billed nothing) instead of {@code completed}
   * @param maxConcurrent unfinished jobs one account may have; the media provider's limit is 5
   * @param contentBytes size of a completed job's video content
   * @param retryAfterSeconds the {@code retry-after} of the account-limit 429
   */
  record Settings(
      Duration queueFor,
      Duration runFor,
      boolean fail,
      int maxConcurrent,
      long contentBytes,
      int retryAfterSeconds) {
    Settings {
      Objects.requireNonNull(queueFor, "queueFor");
      Objects.requireNonNull(runFor, "runFor");
      if (queueFor.isNegative() || runFor.isNegative()) {
        throw new IllegalArgumentException("queue and run times must be >= 0");
      }
      if (maxConcurrent < 1) {
        throw new IllegalArgumentException("maxConcurrent must be >= 1");
      }
      if (contentBytes < 0) {
        throw new IllegalArgumentException("contentBytes must be >= 0");
      }
      if (retryAfterSeconds < 0) {
        throw new IllegalArgumentException("retryAfterSeconds must be >= 0");
      }
    }

    /** Short jobs (a second queued, two running), the provider's limit of 5, 64 KiB videos. */
    static Settings defaults() {
      return new Settings(Duration.ofSeconds(1), Duration.ofSeconds(2), false, 5, 64 * 1024, 10);
    }
  }

  /** A job as created; its status is derived from {@link #statusAt}. */
  record Job(
      String id,
      String account,
      String model,
      String seconds,
      String size,
      Instant createdAt,
      Duration queueFor,
      Duration runFor,
      boolean fail,
      long contentBytes) {

    String statusAt(Instant now) {
      if (now.isBefore(createdAt.plus(queueFor))) {
        return "queued";
      }
      if (now.isBefore(endsAt())) {
        return "in_progress";
      }
      return fail ? "failed" : "completed";
    }

    Instant endsAt() {
      return createdAt.plus(queueFor).plus(runFor);
    }

    boolean unfinishedAt(Instant now) {
      return now.isBefore(endsAt());
    }

    int progressAt(Instant now) {
      if (!now.isAfter(createdAt.plus(queueFor))) {
        return 0;
      }
      if (!unfinishedAt(now)) {
        return 100;
      }
      long ran = Duration.between(createdAt.plus(queueFor), now).toMillis();
      return (int) Math.min(99, ran * 100 / Math.max(1, runFor.toMillis()));
    }
  }

  /** What a submit got: the new job, or the account's limit was reached. */
  sealed interface Submitted {
    record Created(Job job) implements Submitted {}

    record AccountFull(int unfinished, int retryAfterSeconds) implements Submitted {}
  }

  private final Clock clock;
  private final Map<String, Job> jobs = new LinkedHashMap<>();
  private Settings settings = Settings.defaults();
  private long created;
  private long refused;

  MediaJobs(Clock clock) {
    this.clock = clock;
  }

  synchronized Settings settings() {
    return settings;
  }

  synchronized void settings(Settings s) {
    this.settings = Objects.requireNonNull(s, "settings");
  }

  /** Creates a job unless the account already has its limit of unfinished ones. */
  synchronized Submitted submit(String account, String model, String seconds, String size) {
    Instant now = clock.instant();
    int unfinished = unfinished(account, now);
    if (unfinished >= settings.maxConcurrent()) {
      refused++;
      return new Submitted.AccountFull(unfinished, settings.retryAfterSeconds());
    }
    Job job =
        new Job(
            Ids.base62("video_", 24),
            account,
            model,
            seconds,
            size,
            now,
            settings.queueFor(),
            settings.runFor(),
            settings.fail(),
            settings.contentBytes());
    jobs.put(job.id(), job);
    created++;
    if (jobs.size() > MAX_JOBS) {
      Iterator<String> oldest = jobs.keySet().iterator();
      oldest.next();
      oldest.remove();
    }
    return new Submitted.Created(job);
  }

  /** The job, only to the account that created it (another account's job is not found). */
  synchronized Optional<Job> find(String account, String id) {
    return Optional.ofNullable(jobs.get(id)).filter(j -> j.account().equals(account));
  }

  synchronized boolean delete(String account, String id) {
    if (find(account, id).isEmpty()) {
      return false;
    }
    jobs.remove(id);
    return true;
  }

  synchronized int unfinished(String account) {
    return unfinished(account, clock.instant());
  }

  private int unfinished(String account, Instant now) {
    int n = 0;
    for (Job j : jobs.values()) {
      if (j.account().equals(account) && j.unfinishedAt(now)) {
        n++;
      }
    }
    return n;
  }

  /**
   * Ends every unfinished job now, as its settings said it would end (completed or failed): a test
   * that needs jobs running across a kill and a restart asks for long jobs and ends them when it
   * has looked, instead of waiting out a run time sized for the slowest machine.
   *
   * @return how many jobs were ended
   */
  synchronized int finishUnfinished() {
    Instant now = clock.instant();
    int ended = 0;
    for (Map.Entry<String, Job> e : jobs.entrySet()) {
      Job j = e.getValue();
      if (j.unfinishedAt(now)) {
        Duration queued = Duration.between(j.createdAt(), now);
        Duration queueFor = queued.compareTo(j.queueFor()) < 0 ? queued : j.queueFor();
        e.setValue(
            new Job(
                j.id(),
                j.account(),
                j.model(),
                j.seconds(),
                j.size(),
                j.createdAt(),
                queueFor,
                queued.minus(queueFor),
                j.fail(),
                j.contentBytes()));
        ended++;
      }
    }
    return ended;
  }

  /** Peak-free counters for tests: jobs created, submits refused by the account limit. */
  synchronized long created() {
    return created;
  }

  synchronized long refused() {
    return refused;
  }

  synchronized void reset() {
    jobs.clear();
    settings = Settings.defaults();
    created = 0;
    refused = 0;
  }

  Instant now() {
    return clock.instant();
  }

  /** The job in the Videos API shape. */
  static ObjectNode json(ObjectMapper mapper, Job job, Instant now) {
    String status = job.statusAt(now);
    ObjectNode out = mapper.createObjectNode();
    out.put("id", job.id());
    out.put("object", "video");
    out.put("created_at", job.createdAt().getEpochSecond());
    out.put("status", status);
    out.put("model", job.model());
    out.put("progress", job.progressAt(now));
    out.put("seconds", job.seconds());
    out.put("size", job.size());
    if (status.equals("completed") || status.equals("failed")) {
      out.put("completed_at", job.endsAt().getEpochSecond());
    } else {
      out.putNull("completed_at");
    }
    if (status.equals("failed")) {
      out.putObject("error")
          .put("code", "video_generation_failed")
          .put("message", "The video could not be generated.");
    } else {
      out.putNull("error");
    }
    return out;
  }
}
