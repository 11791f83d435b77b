package dev.spendgateway.edge.media;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.media.MediaCatalog;
import dev.spendgateway.policy.request.MediaRules;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a media job's reservation once the gateway sees the job end, whoever saw it (the poller or
 * a caller's GET): at its billed seconds when {@code completed}, at $0 when {@code failed}. A job
 * still running closes nothing; one that never ends expires at its worst case in the ledger.
 * Closing twice is harmless: the ledger answers a repeat with the first result.
 */
final class MediaSettlement {
  private static final Logger log = LoggerFactory.getLogger(MediaSettlement.class);

  /** Reservation ids this node's closes are remembered by, so a close is counted once. */
  private static final int COUNTED_IDS = 10_000;

  private final LedgerClient ledger;
  private final MediaCatalog catalog;
  private final MediaListener listener;

  /**
   * The jobs this node closed lately (the poller and a caller's GET may both see a job end): the
   * meters count each close once. Bounded; an id this old has long left every poll.
   */
  private final Map<String, Boolean> counted =
      Collections.synchronizedMap(
          new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
              return size() > COUNTED_IDS;
            }
          });

  MediaSettlement(LedgerClient ledger, MediaCatalog catalog, MediaListener listener) {
    this.ledger = ledger;
    this.catalog = catalog;
    this.listener = listener;
  }

  /** A job seen by a caller's GET: the reserved amount is asked of the ledger when it ended. */
  CompletionStage<Void> seen(String reservationId, JsonNode job) {
    if (MediaRules.billedMicros(catalog, job, 0).isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return ledger
        .get(reservationId)
        .thenCompose(
            view ->
                view instanceof LedgerProtocol.ReservationView v
                        && v.status() == dev.spendgateway.ledger.Reservation.Status.RESERVED
                    ? seen(reservationId, job, v.amountMicros())
                    : CompletableFuture.<Void>completedFuture(null));
  }

  /** A job seen with its reservation's amount known (the poller's list carries it). */
  CompletionStage<Void> seen(String reservationId, JsonNode job, long reservedMicros) {
    OptionalLong billed = MediaRules.billedMicros(catalog, job, reservedMicros);
    if (billed.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    long micros = billed.getAsLong();
    CompletionStage<LedgerProtocol.CloseReply> closed =
        micros == 0 ? ledger.voidReservation(reservationId) : ledger.settle(reservationId, micros);
    return closed
        .thenAccept(reply -> counted(reservationId, job, micros, reply))
        .exceptionally(
            failure -> {
              // Not closed now: the next poll sees the job again and closes it then.
              log.warn("media job {} not closed yet: {}", reservationId, failure.toString());
              return null;
            });
  }

  /** Tells the meters of a close the ledger made, once per job on this node. */
  private void counted(
      String reservationId, JsonNode job, long micros, LedgerProtocol.CloseReply reply) {
    Status closedAs = micros == 0 ? Status.VOIDED : Status.SETTLED;
    if (reply instanceof LedgerProtocol.Closed c
        && c.status() == closedAs
        && c.actualMicros() == micros
        && counted.putIfAbsent(reservationId, Boolean.TRUE) == null) {
      listener.jobClosed(
          job.path("model").asText(""),
          "failed".equals(job.path("status").asText("")) ? "failed" : "completed",
          micros);
    }
  }
}
