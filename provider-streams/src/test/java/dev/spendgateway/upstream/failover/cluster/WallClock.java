package dev.spendgateway.upstream.failover.cluster;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A wall clock the test moves: epoch milliseconds read from {@code millis}. */
final class WallClock extends Clock {
  private final AtomicLong millis;

  WallClock(AtomicLong millis) {
    this.millis = millis;
  }

  @Override
  public ZoneOffset getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis.get());
  }
}
