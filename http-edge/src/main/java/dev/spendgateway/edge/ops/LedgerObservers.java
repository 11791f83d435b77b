package dev.spendgateway.edge.ops;

import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerObserver;
import java.time.Duration;
import java.util.List;

/**
 * The ledger takes one observer; the gateway has two listeners (metrics, the screen's spend trend).
 */
public final class LedgerObservers {
  private LedgerObservers() {}

  /** Tells {@code first}, then {@code second}, everything the ledger reports. */
  public static LedgerObserver both(LedgerObserver first, LedgerObserver second) {
    return new LedgerObserver() {
      @Override
      public void persisted(List<Event> events, Duration writeTime) {
        first.persisted(events, writeTime);
        second.persisted(events, writeTime);
      }

      @Override
      public void recovered(Duration took, int knownReservations, int openReservations) {
        first.recovered(took, knownReservations, openReservations);
        second.recovered(took, knownReservations, openReservations);
      }

      @Override
      public void droppedPastDeadline(int commands) {
        first.droppedPastDeadline(commands);
        second.droppedPastDeadline(commands);
      }

      @Override
      public void shed(int commands) {
        first.shed(commands);
        second.shed(commands);
      }
    };
  }
}
