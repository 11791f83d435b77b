package dev.spendgateway.edge.metrics;

import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerObserver;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ledger's durable writes as Micrometer series (Prometheus names): {@code
 * gateway_ledger_reservations_total{lane}} (accepted), {@code
 * gateway_ledger_refusals_total{lane,cap}}, {@code gateway_ledger_closes_total{status,by}}
 * (settled/voided/expired, by caller/operator/timeout), {@code
 * gateway_ledger_settled_above_reserve_total{lane}} and {@code
 * gateway_ledger_settled_above_reserve_usd_total{lane}}, {@code
 * gateway_ledger_adjustments_total{lane}}, {@code gateway_ledger_journal_batch_events} (summary),
 * {@code gateway_ledger_journal_write_seconds} (histogram), {@code
 * gateway_ledger_recovery_seconds}, {@code gateway_ledger_dropped_past_deadline_total} (commands
 * whose callers had given up, never written), {@code gateway_ledger_shed_total} (answered busy at
 * once: the queue was full) and {@code gateway_ledger_snapshots_total{outcome}} (written, skipped
 * for want of heap, failed). The counters exist at 0 from the start so an alert on them sees a
 * value, not "no data".
 */
public final class MicrometerLedgerObserver implements LedgerObserver {
  private static final Duration[] WRITE_BUCKETS = {
    Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5),
        Duration.ofMillis(10),
    Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
        Duration.ofSeconds(1)
  };

  private final MeterRegistry registry;
  private final DistributionSummary batchSize;
  private final Timer writeTime;
  private final AtomicLong recoveryMillis = new AtomicLong(-1);
  private final Counter droppedPastDeadline;
  private final Counter shed;

  public MicrometerLedgerObserver(MeterRegistry registry) {
    this.registry = registry;
    this.batchSize =
        DistributionSummary.builder("gateway.ledger.journal.batch.events")
            .description("Events per journal write (group commit)")
            .serviceLevelObjectives(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2000)
            .register(registry);
    this.writeTime =
        Timer.builder("gateway.ledger.journal.write")
            .description("From asking the journal to write a batch to its confirmation")
            .serviceLevelObjectives(WRITE_BUCKETS)
            .register(registry);
    Gauge.builder(
            "gateway.ledger.recovery",
            recoveryMillis,
            m -> m.get() < 0 ? Double.NaN : m.get() / 1000.0)
        .baseUnit("seconds")
        .description("How long the last ledger recovery (snapshot + journal) took")
        .register(registry);
    this.droppedPastDeadline =
        counter(
            "gateway.ledger.dropped.past.deadline",
            "Ledger commands dropped unwritten because their caller's deadline had passed");
    this.shed =
        counter(
            "gateway.ledger.shed",
            "Ledger commands answered busy at once because the queue was full");
    this.settledByCaller = closes("settled", "caller");
    this.settledByOperator = closes("settled", "operator");
    this.voidedByCaller = closes("voided", "caller");
    this.voidedByOperator = closes("voided", "operator");
    this.expired = closes("expired", "timeout");
    registerLaneCounters();
  }

  /**
   * Every ledger counter series that can occur, registered once, at 0 from the start: an alert on a
   * rate then sees 0, not "no data", before the first refusal or expiry, and counting an event on
   * the ledger's writer thread is an array lookup and an add, never a registry lookup or an
   * allocation. (Labels here are small closed sets: three lanes, the caps a lane can hit, two
   * closers.)
   */
  private final Counter[] reservations = new Counter[Lane.values().length];

  private final Counter[][] refusals = new Counter[Lane.values().length][CapName.values().length];
  private final Counter[] settledAboveReserve = new Counter[Lane.values().length];
  private final Counter[] settledAboveReserveUsd = new Counter[Lane.values().length];
  private final Counter[] adjustments = new Counter[Lane.values().length];

  /** Closes by status (settled, voided) and closer (caller, operator). */
  private final Counter settledByCaller;

  private final Counter settledByOperator;
  private final Counter voidedByCaller;
  private final Counter voidedByOperator;
  private final Counter expired;

  private void registerLaneCounters() {
    for (Lane lane : Lane.values()) {
      String l = lane.wireName();
      int i = lane.ordinal();
      reservations[i] = counter("gateway.ledger.reservations", "Reservations accepted", "lane", l);
      settledAboveReserve[i] =
          counter(
              "gateway.ledger.settled.above.reserve",
              "Reservations settled above their amount",
              "lane",
              l);
      settledAboveReserveUsd[i] =
          counter(
              "gateway.ledger.settled.above.reserve.usd",
              "USD settled above reservations",
              "lane",
              l);
      adjustments[i] = counter("gateway.ledger.adjustments", "Operator adjustments", "lane", l);
      for (CapName cap : capsOf(lane)) {
        refusals[i][cap.ordinal()] =
            counter(
                "gateway.ledger.refusals",
                "Reservations refused, by the first cap that refused",
                "lane",
                l,
                "cap",
                cap.wireName());
      }
    }
    for (SnapshotOutcome outcome : SnapshotOutcome.values()) {
      snapshots(outcome);
    }
  }

  private Counter closes(String status, String by) {
    return counter("gateway.ledger.closes", "Reservations closed", "status", status, "by", by);
  }

  /** The caps a reservation on {@code lane} is held against (and so may be refused by). */
  private static List<CapName> capsOf(Lane lane) {
    return switch (lane) {
      case APP ->
          List.of(
              CapName.GLOBAL_DAILY,
              CapName.GLOBAL_MONTHLY,
              CapName.BRAND_DAILY,
              CapName.BRAND_MONTHLY);
      case TRIAL ->
          List.of(
              CapName.GLOBAL_DAILY,
              CapName.GLOBAL_MONTHLY,
              CapName.TRIAL_DAILY,
              CapName.PREVIEW_LIFETIME);
      case FREE -> List.of(CapName.GLOBAL_DAILY, CapName.GLOBAL_MONTHLY, CapName.FREE_DAILY);
    };
  }

  @Override
  public void droppedPastDeadline(int commands) {
    droppedPastDeadline.increment(commands);
  }

  @Override
  public void shed(int commands) {
    shed.increment(commands);
  }

  @Override
  public void persisted(List<Event> events, Duration took) {
    batchSize.record(events.size());
    writeTime.record(took);
    for (Event e : events) {
      count(e);
    }
  }

  @Override
  public void snapshot(SnapshotOutcome outcome, long sequenceNr) {
    snapshots(outcome).increment();
  }

  private Counter snapshots(SnapshotOutcome outcome) {
    return counter(
        "gateway.ledger.snapshots",
        "Ledger snapshots that fell due, by what became of them (written, skipped: no heap room,"
            + " failed)",
        "outcome",
        outcome.wireName());
  }

  @Override
  public void recovered(Duration took, int knownReservations, int openReservations) {
    recoveryMillis.set(took.toMillis());
  }

  private void count(Event event) {
    if (event instanceof ReservationMade m) {
      reservations[m.lane().ordinal()].increment();
    } else if (event instanceof ReservationRefused r) {
      Counter refused = refusals[r.lane().ordinal()][r.cap().ordinal()];
      (refused != null ? refused : refusedOffTheBooks(r)).increment();
    } else if (event instanceof ReservationSettled s) {
      (s.operator() == null ? settledByCaller : settledByOperator).increment();
      if (s.overReserve()) {
        settledAboveReserve[s.lane().ordinal()].increment();
        settledAboveReserveUsd[s.lane().ordinal()].increment(
            (s.actualMicros() - s.reservedMicros()) / 1_000_000.0);
      }
    } else if (event instanceof ReservationVoided v) {
      (v.operator() == null ? voidedByCaller : voidedByOperator).increment();
    } else if (event instanceof ReservationExpired) {
      expired.increment();
    } else if (event instanceof SpendAdjusted a) {
      adjustments[a.lane().ordinal()].increment();
    }
  }

  /** A refusal by a cap its lane is not held against (a journal older than {@link #capsOf}). */
  private Counter refusedOffTheBooks(ReservationRefused r) {
    return counter(
        "gateway.ledger.refusals",
        "Reservations refused, by the first cap that refused",
        "lane",
        r.lane().wireName(),
        "cap",
        r.cap().wireName());
  }

  private Counter counter(String name, String description, String... tags) {
    return Counter.builder(name).description(description).tags(tags).register(registry);
  }
}
