package dev.spendgateway.ledger.audit;

import java.io.PrintStream;
import java.time.Duration;

/**
 * Counts events and, at most once a second, prints the count and the rate to {@code out} (stderr).
 */
public final class Progress {
  private static final long SECOND = Duration.ofSeconds(1).toNanos();

  private final PrintStream out;
  private final String verb;
  private final long startedNanos = System.nanoTime();
  private long lastPrintNanos = startedNanos;
  private long lastPrintCount;
  private long count;

  public Progress(PrintStream out, String verb) {
    this.out = out;
    this.verb = verb;
  }

  /** A progress that prints nothing (tests, small journals piped elsewhere). */
  public static Progress silent() {
    return new Progress(null, "");
  }

  public void tick() {
    count++;
    if (out != null && (count & 1023) == 0) {
      long now = System.nanoTime();
      if (now - lastPrintNanos >= SECOND) {
        long rate = (count - lastPrintCount) * SECOND / (now - lastPrintNanos);
        out.printf("%s: %,d events, %,d events/s%n", verb, count, rate);
        lastPrintNanos = now;
        lastPrintCount = count;
      }
    }
  }

  public long count() {
    return count;
  }

  public Duration elapsed() {
    return Duration.ofNanos(System.nanoTime() - startedNanos);
  }

  /** Events per second over the whole run. */
  public long rate() {
    long nanos = Math.max(1, System.nanoTime() - startedNanos);
    return count * SECOND / nanos;
  }

  /** One closing line: how many events, how long, how fast. */
  public void finish() {
    if (out != null) {
      out.printf(
          "%s: %,d events in %,d ms (%,d events/s)%n", verb, count, elapsed().toMillis(), rate());
    }
  }
}
