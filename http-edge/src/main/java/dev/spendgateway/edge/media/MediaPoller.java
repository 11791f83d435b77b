package dev.spendgateway.edge.media;

import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.OpenMediaJob;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Polls the media provider for every open media job and settles the ones that ended, so a job is
 * settled even when its caller never asks again. Its list of jobs is the ledger's (open media
 * reservations with a recorded job id), so it needs no state of its own and picks up after a
 * restart or on another node where it left off.
 *
 * <p>Bounded work per tick: at most {@code media.poll-batch} jobs, taken round-robin from where the
 * last tick stopped, one tick at a time (a slow tick delays the next instead of piling up).
 */
public final class MediaPoller implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(MediaPoller.class);

  private final MediaRoutes.Parts parts;
  private final LedgerClient ledger;
  private final AtomicBoolean ticking = new AtomicBoolean();
  private final AtomicInteger openJobs = new AtomicInteger();
  private final Cancellable timer;

  /** Where the next tick starts in the ledger's list (round-robin over ticks). */
  private String lastPolled = "";

  MediaPoller(ActorSystem<?> system, MediaRoutes.Parts parts, LedgerClient ledger) {
    this.parts = parts;
    this.ledger = ledger;
    this.timer =
        parts.settings().enabled()
            ? system
                .scheduler()
                .scheduleWithFixedDelay(
                    parts.settings().pollInterval(),
                    parts.settings().pollInterval(),
                    this::tick,
                    system.executionContext())
            : Cancellable.alreadyCancelled();
  }

  /** Open media jobs at the last tick, for /metrics and the ops screen. */
  public int openJobs() {
    return openJobs.get();
  }

  /** One round: ask the ledger, poll a batch, settle what ended. Skipped while one still runs. */
  void tick() {
    if (!ticking.compareAndSet(false, true)) {
      return;
    }
    ledger
        .openMediaJobs()
        .thenCompose(
            open -> {
              openJobs.set(open.jobs().size());
              return pollAll(nextBatch(open.jobs()));
            })
        .whenComplete(
            (done, failure) -> {
              if (failure != null) {
                log.warn("media poll failed: {}", failure.toString());
              }
              ticking.set(false);
            });
  }

  /** Up to a batch of jobs with an id, starting after the last one polled. */
  private List<OpenMediaJob> nextBatch(List<OpenMediaJob> open) {
    List<OpenMediaJob> known = new ArrayList<>();
    for (OpenMediaJob j : open) {
      if (j.jobId() != null) {
        known.add(j);
      }
    }
    known.sort((a, b) -> a.id().compareTo(b.id()));
    int start = 0;
    while (start < known.size() && known.get(start).id().compareTo(lastPolled) <= 0) {
      start++;
    }
    List<OpenMediaJob> batch = new ArrayList<>();
    int size = Math.min(parts.settings().pollBatch(), known.size());
    for (int i = 0; i < size; i++) {
      batch.add(known.get((start + i) % known.size()));
    }
    if (!batch.isEmpty()) {
      lastPolled = batch.get(batch.size() - 1).id();
    }
    return batch;
  }

  /** One job after the other, so a tick holds at most one provider call open. */
  private CompletionStage<Void> pollAll(List<OpenMediaJob> batch) {
    CompletionStage<Void> chain = CompletableFuture.completedFuture(null);
    for (OpenMediaJob job : batch) {
      chain = chain.thenCompose(ignored -> poll(job));
    }
    return chain;
  }

  private CompletionStage<Void> poll(OpenMediaJob job) {
    return parts
        .upstream()
        .retrieve(job.jobId())
        .thenCompose(
            answer ->
                answer.ok()
                    ? parts
                        .json(answer.body())
                        .map(j -> parts.settlement().seen(job.id(), j, job.amountMicros()))
                        .orElse(CompletableFuture.completedFuture(null))
                    : CompletableFuture.<Void>completedFuture(null))
        .exceptionally(
            failure -> {
              log.debug("media job {} not polled: {}", job.id(), failure.toString());
              return null;
            });
  }

  @Override
  public void close() {
    timer.cancel();
  }
}
