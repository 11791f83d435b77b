package dev.spendgateway.ledger.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The workflow tag, model and provider survive {@code export} and read back for {@code verify
 * --input} and {@code import}; an export written before they were journaled reads as untagged, for
 * no model and no provider.
 */
class JsonlEventsTagTest {
  private static final Instant AT = Instant.parse("2026-12-05T10:00:00Z");
  private final JsonlEvents jsonl = new JsonlEvents();

  @Test
  void aLabelledReservationAndRefusalRoundTripThroughAnExportLine() {
    ReservationMade made =
        new ReservationMade(
            "r-1",
            Lane.FREE,
            null,
            100_000,
            0,
            0,
            AT,
            AT.plusSeconds(900),
            Owner.GATEWAY,
            "ops",
            "gpt-6.1-sol",
            "openai");
    assertEquals(made, jsonl.parse(jsonl.line(new Journaled(7, made))).event());
    ReservationRefused refused =
        new ReservationRefused(
            "r-2",
            Lane.FREE,
            null,
            100_000,
            0,
            0,
            CapName.FREE_DAILY,
            null,
            "2026-12-05",
            3_000_000,
            50_000,
            AT,
            Owner.GATEWAY,
            null,
            "claude-haiku-5-5",
            "anthropic");
    assertEquals(refused, jsonl.parse(jsonl.line(new Journaled(8, refused))).event());
  }

  @Test
  void anExportLineWithoutATagModelOrProviderReadsAsNone() {
    String older =
        "{\"seq\":3,\"type\":\"ReservationMade\",\"event\":{\"id\":\"r-1\",\"lane\":\"FREE\","
            + "\"subject\":null,\"amountMicros\":100000,\"brandDailyMicros\":0,"
            + "\"brandMonthlyMicros\":0,\"at\":\"2026-12-05T10:00:00Z\","
            + "\"expiresAt\":\"2026-12-05T10:15:00Z\",\"v\":1}}";
    ReservationMade read = (ReservationMade) jsonl.parse(older).event();
    assertNull(read.tag());
    assertNull(read.model());
    assertNull(read.provider());
    assertEquals("r-1", read.id());
  }
}
