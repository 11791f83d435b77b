package dev.spendgateway.ledger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock the test moves by hand (the ledger reads it only when deciding a command). */
public final class TestClock extends Clock {
  private final AtomicReference<Instant> now;

  public TestClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  public static TestClock at(String isoInstant) {
    return new TestClock(Instant.parse(isoInstant));
  }

  public void set(String isoInstant) {
    now.set(Instant.parse(isoInstant));
  }

  public void advance(Duration d) {
    now.updateAndGet(t -> t.plus(d));
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException();
  }
}
