package dev.spendgateway.edge.ops;

import dev.spendgateway.ledger.AdjustmentScope;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerObserver;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

/**
 * Spend per UTC hour over the last {@code hours} hours, for the operations screen's trend chart:
 * one counter per hour in a ring, so memory is fixed whatever the traffic. Fed by the ledger's
 * durable writes ({@link LedgerObserver#persisted}) and, once at start, by the journal's facts of
 * the hours before ({@link #rebuild}); the two never overlap because the ledger only reports writes
 * made after its recovery, and the rebuild only counts facts from before it.
 *
 * <p>Spend is what the global caps count: a settle at its actual cost, an expiry at the worst case
 * it kept, an operator refund at its delta (negative). Voids, reservations and brand credits
 * (grants, which move only the brand's own caps) count nothing, so the last 24 hours add up to what
 * {@code global_daily} says was spent in them.
 */
public final class SpendPerHour implements LedgerObserver {
  private static final long HOUR_SECONDS = 3600;

  private final Clock clock;
  private final int hours;

  /** Micro-dollars per hour slot; {@link #slotHour} says which hour a slot holds now. */
  private final AtomicLongArray micros;

  private final long[] slotHour;
  private final Consumer<SpendPerHour> onRecovered;
  private volatile Instant recoveredAt;
  private volatile boolean rebuilt;

  /**
   * @param hours how many hours the series keeps (the screen shows 24)
   * @param onRecovered told when the ledger finished its recovery: start the rebuild from the
   *     journal there (facts from before that instant are read back, later ones are reported)
   */
  public SpendPerHour(Clock clock, int hours, Consumer<SpendPerHour> onRecovered) {
    if (hours < 1) {
      throw new IllegalArgumentException("hours must be >= 1");
    }
    this.clock = clock;
    this.hours = hours;
    this.micros = new AtomicLongArray(hours + 1);
    this.slotHour = new long[hours + 1];
    java.util.Arrays.fill(slotHour, Long.MIN_VALUE);
    this.onRecovered = onRecovered;
  }

  /** One hour of the series: its start and the spend in it, in micro-dollars. */
  public record Hour(Instant start, long micros) {}

  @Override
  public void persisted(List<Event> events, Duration writeTime) {
    for (Event e : events) {
      add(e);
    }
  }

  @Override
  public void recovered(Duration took, int knownReservations, int openReservations) {
    recoveredAt = clock.instant();
    onRecovered.accept(this);
  }

  /**
   * Counts a fact read back from the journal at start: only facts before the ledger's recovery (the
   * later ones arrive through {@link #persisted}) and within the series' hours.
   */
  public void rebuild(Event e) {
    Instant until = recoveredAt;
    if (until == null) {
      return;
    }
    for (Event fact : GroupCommit.factsOf(e)) {
      Instant at = fact.at();
      if (at != null && at.isBefore(until)) {
        add(fact);
      }
    }
  }

  /**
   * The rebuild from the journal has ended (or failed: the series then shows only what followed).
   */
  public void rebuildDone() {
    rebuilt = true;
  }

  public boolean isRebuilt() {
    return rebuilt;
  }

  /** The first instant the series still covers: facts before it are not worth reading back. */
  public Instant cutoff() {
    return currentHourStart().minus(hours - 1L, ChronoUnit.HOURS);
  }

  /**
   * The last {@code hours} hours, oldest first, the current hour last (an hour without spend is 0).
   */
  public List<Hour> series() {
    long current = hourOf(clock.instant());
    List<Hour> out = new ArrayList<>(hours);
    for (long h = current - hours + 1; h <= current; h++) {
      int slot = slot(h);
      long value;
      synchronized (slotHour) {
        value = slotHour[slot] == h ? micros.get(slot) : 0;
      }
      out.add(new Hour(Instant.ofEpochSecond(h * HOUR_SECONDS), value));
    }
    return out;
  }

  private void add(Event e) {
    long amount;
    if (e instanceof ReservationSettled s) {
      amount = s.actualMicros();
    } else if (e instanceof ReservationExpired x) {
      amount = x.reservedMicros();
    } else if (e instanceof SpendAdjusted a) {
      // A grant (brand credit) moves only the brand's own caps; the series is what the global
      // caps count, the figure an operator compares it with.
      amount = a.scope() == AdjustmentScope.REFUND ? a.deltaMicros() : 0;
    } else if (e instanceof GroupCommit g) {
      g.facts().forEach(this::add);
      return;
    } else {
      return;
    }
    if (amount == 0 || e.at() == null) {
      return;
    }
    long hour = hourOf(e.at());
    long current = hourOf(clock.instant());
    if (hour <= current - hours || hour > current) {
      return;
    }
    int slot = slot(hour);
    synchronized (slotHour) {
      if (slotHour[slot] != hour) {
        // The slot last held an hour that has left the window: start it afresh.
        slotHour[slot] = hour;
        micros.set(slot, 0);
      }
      micros.addAndGet(slot, amount);
    }
  }

  private Instant currentHourStart() {
    return Instant.ofEpochSecond(hourOf(clock.instant()) * HOUR_SECONDS);
  }

  private int slot(long hour) {
    return (int) Math.floorMod(hour, (long) micros.length());
  }

  private static long hourOf(Instant t) {
    return Math.floorDiv(t.getEpochSecond(), HOUR_SECONDS);
  }
}
