package dev.spendgateway.edge.media;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.policy.media.MediaCatalog;
import dev.spendgateway.policy.request.MediaRules;
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

  private final LedgerClient ledger;
  private final MediaCatalog catalog;

  MediaSettlement(LedgerClient ledger, MediaCatalog catalog) {
    this.ledger = ledger;
    this.catalog = catalog;
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
        .thenAccept(reply -> {})
        .exceptionally(
            failure -> {
              // Not closed now: the next poll sees the job again and closes it then.
              log.warn("media job {} not closed yet: {}", reservationId, failure.toString());
              return null;
            });
  }
}
