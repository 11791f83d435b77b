package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.cbor.CBORFactory;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every event is Jackson CBOR (never Java serialization), carries its schema version and
 * round-trips; so does the state's snapshot form, and a snapshot of an older form still reads.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EventSerializationTest {
  private static final Instant AT = Instant.parse("2026-11-30T10:00:00Z");
  private ActorTestKit testKit;
  private Serialization serialization;

  @BeforeAll
  void start() {
    testKit = ActorTestKit.create();
    serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
  }

  @AfterAll
  void stop() {
    testKit.shutdownTestKit();
  }

  static Stream<Event> events() {
    return Stream.of(
        new GlobalBudget.ReservationMade(
            "r-1", Lane.APP, "b1", 300_000, 5_000_000, 50_000_000, AT, AT.plusSeconds(900)),
        new GlobalBudget.ReservationMade(
            "r-5",
            Lane.FREE,
            null,
            300_000,
            0,
            0,
            AT,
            AT.plusSeconds(900),
            Reservation.Owner.GATEWAY,
            "onboarding",
            "gpt-6.1-sol",
            "openai"),
        new GlobalBudget.ReservationMade(
            "r-7",
            Lane.FREE,
            null,
            300_000,
            0,
            0,
            AT,
            AT.plusSeconds(900),
            Reservation.Owner.GATEWAY,
            null,
            "claude-haiku-5-5",
            "anthropic"),
        new GlobalBudget.ReservationRefused(
            "r-6",
            Lane.FREE,
            null,
            300_000,
            0,
            0,
            CapName.FREE_DAILY,
            null,
            "2026-11-30",
            600_000,
            200_000,
            AT,
            Reservation.Owner.GATEWAY,
            "onboarding",
            "gpt-6.1-sol",
            "openai"),
        new GlobalBudget.ReservationRefused(
            "r-2",
            Lane.TRIAL,
            "p1",
            300_000,
            0,
            0,
            CapName.PREVIEW_LIFETIME,
            "p1",
            "lifetime",
            600_000,
            200_000,
            AT),
        new GlobalBudget.ReservationSettled(
            "r-1", Lane.APP, "b1", AT, 300_000, 120_000, AT.plusSeconds(3)),
        new GlobalBudget.ReservationVoided("r-3", Lane.FREE, null, AT, 300_000, AT.plusSeconds(3)),
        new GlobalBudget.ReservationExpired(
            "r-4", Lane.FREE, null, AT, 300_000, AT.plusSeconds(901)),
        new GlobalBudget.SpendAdjusted("adj-1", "alice", "refund", Lane.APP, "b1", -1_000_000, AT),
        new GlobalBudget.Compacted(AT.minusSeconds(86_400 * 35), AT),
        new LedgerEvents.WindowZoneChanged(
            "Europe/Istanbul", "UTC", Instant.parse("2026-12-01T00:00:00Z"), AT),
        new LedgerEvents.AllowanceOut(
            "t-1",
            "eu",
            "us",
            CapName.GLOBAL_DAILY,
            null,
            "2026-11-30",
            2_000_000,
            "PULL",
            null,
            AT),
        new LedgerEvents.AllowanceIn(
            "t-2",
            "ap",
            "eu",
            CapName.GLOBAL_MONTHLY,
            null,
            "2026-11",
            5_000_000,
            "launch",
            "alice",
            AT));
  }

  @Test
  void anAllowanceTransferIsWrittenAsItsFactsOnly() throws Exception {
    var out =
        new LedgerEvents.AllowanceOut(
            "t-1",
            "eu",
            "us",
            CapName.GLOBAL_DAILY,
            null,
            "2026-11-30",
            2_000_000,
            "PULL",
            null,
            AT);
    JsonNode tree =
        new ObjectMapper(new CBORFactory()).readTree(serialization.serialize(out).get());
    // No derived key, no absent operator or subject: an export reads as the fact.
    assertFalse(tree.has("key"));
    assertFalse(tree.has("operator"));
    assertFalse(tree.has("subject"));
    assertEquals("t-1", tree.get("transferId").asText());
  }

  @Test
  void anUnlabelledReservationIsWrittenWithoutThemAndALabelledOneKeepsThem() throws Exception {
    ObjectMapper cbor = new ObjectMapper(new CBORFactory());
    var untagged =
        new GlobalBudget.ReservationMade(
            "r-1", Lane.APP, "b1", 300_000, 5_000_000, 50_000_000, AT, AT.plusSeconds(900));
    // Written as before tags, models and providers were journaled, so older readers and fixtures
    // see the same bytes.
    var unlabelled = cbor.readTree(serialization.serialize(untagged).get());
    assertFalse(unlabelled.has("tag"));
    assertFalse(unlabelled.has("model"));
    assertFalse(unlabelled.has("provider"));
    var tagged =
        new GlobalBudget.ReservationMade(
            "r-1",
            Lane.APP,
            "b1",
            300_000,
            5_000_000,
            50_000_000,
            AT,
            AT.plusSeconds(900),
            Reservation.Owner.GATEWAY,
            "support.triage",
            "gpt-6.1-sol",
            "openai");
    var labelled = cbor.readTree(serialization.serialize(tagged).get());
    assertEquals("support.triage", labelled.get("tag").asText());
    assertEquals("gpt-6.1-sol", labelled.get("model").asText());
    assertEquals("openai", labelled.get("provider").asText());
    // A media job's reservation gets its lifetime this way: it keeps what it was for.
    assertEquals(tagged, tagged.expiringAt(AT.plusSeconds(60)).expiringAt(AT.plusSeconds(900)));
  }

  @Test
  void theSnapshotFormKeepsAllowanceTransfersAndAnOlderOneReadsAsNone() throws Exception {
    LedgerState state =
        someState()
            .applied(
                new LedgerEvents.AllowanceOut(
                    "t-1",
                    "eu",
                    "us",
                    CapName.GLOBAL_DAILY,
                    null,
                    "2026-11-30",
                    2_000_000,
                    "PULL",
                    null,
                    AT));
    LedgerState read = roundTrip(serialization.serialize(state).get(), state);
    assertEquals(state, read);
    assertEquals(
        -2_000_000, read.allowanceMovedIn(new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-30")));

    ObjectMapper cbor = new ObjectMapper(new CBORFactory());
    ObjectNode tree = (ObjectNode) cbor.readTree(serialization.serialize(someState()).get());
    tree.remove("allowanceOuts");
    tree.remove("allowanceIns");
    assertEquals(someState(), roundTrip(cbor.writeValueAsBytes(tree), state));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("events")
  void isVersionedCborAndRoundTrips(Event event) throws Exception {
    var serializer = serialization.findSerializerFor(event);
    assertEquals("JacksonCborSerializer", serializer.getClass().getSimpleName());
    byte[] bytes = serialization.serialize(event).get();

    JsonNode tree = new ObjectMapper(new CBORFactory()).readTree(bytes);
    assertEquals(event.version(), tree.get("v").asInt());
    assertEquals(event instanceof GlobalBudget.Compacted ? 2 : 1, event.version());

    String manifest = Serializers.manifestFor(serializer, event);
    assertEquals(event, serialization.deserialize(bytes, serializer.identifier(), manifest).get());
  }

  private LedgerState someState() {
    return LedgerState.empty()
        .applied(
            new GlobalBudget.ReservationMade(
                "r-1", Lane.APP, "b1", 300_000, 5_000_000, 50_000_000, AT, AT.plusSeconds(900)))
        .applied(
            new GlobalBudget.SpendAdjusted(
                "adj-1", "alice", "refund", Lane.APP, "b1", -1_000_000, AT))
        .applied(
            new GlobalBudget.SpendAdjusted(
                "adj-2", "bob", "missed line", Lane.FREE, null, 20_000, AT));
  }

  private LedgerState roundTrip(byte[] bytes, Object like) {
    var serializer = serialization.findSerializerFor(like);
    return (LedgerState)
        serialization
            .deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, like))
            .get();
  }

  @Test
  void theSnapshotFormKeepsTheAdjustmentIds() {
    LedgerState state = someState();
    LedgerState read = roundTrip(serialization.serialize(state).get(), state);
    assertEquals(state, read);
    assertEquals(2, read.knownAdjustments());
    assertEquals(state.adjustment("adj-1"), read.adjustment("adj-1"));
  }

  @Test
  void theSnapshotFormKeepsTheWindowCalendar() throws Exception {
    LedgerState state =
        someState()
            .applied(
                new LedgerEvents.WindowZoneChanged(
                    "Europe/Istanbul", "UTC", Instant.parse("2026-12-01T00:00:00Z"), AT));
    LedgerState read = roundTrip(serialization.serialize(state).get(), state);
    assertEquals(state, read);
    assertEquals(state.calendar(), read.calendar());
    assertEquals(
        java.time.ZoneId.of("Europe/Istanbul"),
        read.calendar().zoneAt(Instant.parse("2026-12-01T00:00:00Z")));
    assertEquals(
        java.time.ZoneOffset.UTC, read.calendar().zoneAt(Instant.parse("2026-11-30T23:59:59Z")));
  }

  @Test
  void aSnapshotWrittenBeforeWindowZonesReadsAsUtc() throws Exception {
    LedgerState state = someState();
    ObjectMapper cbor = new ObjectMapper(new CBORFactory());
    ObjectNode tree = (ObjectNode) cbor.readTree(serialization.serialize(state).get());
    tree.remove("windowZones"); // every snapshot written before window zones

    LedgerState read = roundTrip(cbor.writeValueAsBytes(tree), state);
    assertEquals(state, read);
    assertEquals(dev.spendgateway.policy.caps.WindowCalendar.UTC, read.calendar());
  }

  @Test
  void aSnapshotWrittenBeforeAdjustmentIdsWereKeptStillReads() throws Exception {
    LedgerState state = someState();
    ObjectMapper cbor = new ObjectMapper(new CBORFactory());
    ObjectNode tree = (ObjectNode) cbor.readTree(serialization.serialize(state).get());
    assertTrue(tree.has("adjustments"));
    tree.remove("adjustments"); // the first snapshot form: reservations, spend, brandCaps

    LedgerState read = roundTrip(cbor.writeValueAsBytes(tree), state);
    assertEquals(0, read.knownAdjustments());
    assertEquals(
        state.spendOn(new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-30")),
        read.spendOn(new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-30")));
    // The same books; it only remembers fewer adjustment ids (verify accepts that, not the
    // reverse).
    assertTrue(state.sameBooksAs(read));
    assertFalse(read.sameBooksAs(state));
  }

  @Test
  void aSnapshotWrittenBeforeOwnersWereRecordedStillReads() throws Exception {
    LedgerState state =
        someState()
            .applied(
                new GlobalBudget.ReservationMade(
                    "gw-1",
                    Lane.FREE,
                    null,
                    1_000,
                    0,
                    0,
                    AT,
                    AT.plusSeconds(900),
                    Reservation.Owner.GATEWAY));
    ObjectMapper cbor = new ObjectMapper(new CBORFactory());
    ObjectNode tree = (ObjectNode) cbor.readTree(serialization.serialize(state).get());
    for (JsonNode reservation : tree.get("reservations")) {
      assertTrue(reservation.has("owner"));
      ((ObjectNode) reservation).remove("owner");
    }

    LedgerState read = roundTrip(cbor.writeValueAsBytes(tree), state);
    assertEquals(state, read);
    assertEquals(Reservation.Owner.GATEWAY, read.reservation("gw-1").orElseThrow().owner());
    assertEquals(Reservation.Owner.LEDGER_API, read.reservation("r-1").orElseThrow().owner());
  }

  @Test
  void aSnapshotListsOpenReservationsSoonestToExpireFirstAndReadsThemInAnyOrder() throws Exception {
    LedgerState state = someState();
    for (int i = 0; i < 20; i++) {
      state =
          state.applied(
              new GlobalBudget.ReservationMade(
                  "o-" + i, Lane.FREE, null, 1_000, 0, 0, AT, AT.plusSeconds(900 - 10L * i)));
    }
    ObjectMapper cbor = new ObjectMapper(new CBORFactory());
    ObjectNode tree = (ObjectNode) cbor.readTree(serialization.serialize(state).get());
    List<String> listed = new java.util.ArrayList<>();
    tree.get("reservations").forEach(r -> listed.add(r.get("id").asText()));
    assertEquals(
        state.dueForExpiry(AT.plusSeconds(3600)).stream().map(Reservation::id).toList(), listed);

    // Older snapshots listed them in hash order: any order reads as the same books.
    ArrayNode reversed = cbor.createArrayNode();
    for (int i = tree.get("reservations").size() - 1; i >= 0; i--) {
      reversed.add(tree.get("reservations").get(i));
    }
    tree.set("reservations", reversed);
    LedgerState read = roundTrip(cbor.writeValueAsBytes(tree), state);
    assertEquals(state, read);
    assertEquals(state.dueForExpiry(AT.plusSeconds(600)), read.dueForExpiry(AT.plusSeconds(600)));
  }
}
