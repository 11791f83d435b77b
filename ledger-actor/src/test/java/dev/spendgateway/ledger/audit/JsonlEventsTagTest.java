package dev.spendgateway.ledger.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The workflow tag survives {@code export} and reads back for {@code verify --input} and {@code
 * import}; an export written before tags existed reads as untagged.
 */
class JsonlEventsTagTest {
  private static final Instant AT = Instant.parse("2026-12-05T10:00:00Z");
  private final JsonlEvents jsonl = new JsonlEvents();

  @Test
  void aTaggedReservationRoundTripsThroughAnExportLine() {
    ReservationMade made =
        new ReservationMade(
            "r-1", Lane.FREE, null, 100_000, 0, 0, AT, AT.plusSeconds(900), Owner.GATEWAY, "ops");
    Journaled read = jsonl.parse(jsonl.line(new Journaled(7, made)));
    assertEquals(made, read.event());
  }

  @Test
  void anExportLineWithoutATagReadsAsUntagged() {
    String older =
        "{\"seq\":3,\"type\":\"ReservationMade\",\"event\":{\"id\":\"r-1\",\"lane\":\"FREE\","
            + "\"subject\":null,\"amountMicros\":100000,\"brandDailyMicros\":0,"
            + "\"brandMonthlyMicros\":0,\"at\":\"2026-12-05T10:00:00Z\","
            + "\"expiresAt\":\"2026-12-05T10:15:00Z\",\"v\":1}}";
    ReservationMade read = (ReservationMade) jsonl.parse(older).event();
    assertNull(read.tag());
    assertEquals("r-1", read.id());
  }
}
