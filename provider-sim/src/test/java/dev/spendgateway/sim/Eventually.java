package dev.spendgateway.sim;

import java.time.Duration;
import java.util.function.Predicate;

/**
 * Waits for a condition instead of sleeping for a fixed time: looks again and again until the
 * condition holds (returning at once when it does) or the time is up, then fails naming what was
 * awaited and what was last seen. A fixed sleep is either too short on a loaded machine (a flaky
 * test) or too long everywhere else (a slow one).
 */
public final class Eventually {
  private static final long FIRST_PAUSE_MILLIS = 5;
  private static final long LONGEST_PAUSE_MILLIS = 50;

  private Eventually() {}

  /** One look at the system under test; may throw (an HTTP call, a query). */
  @FunctionalInterface
  public interface Probe<T> {
    T look() throws Exception;
  }

  /**
   * Returns once {@code condition} holds; fails after {@code within} with "timed out after …
   * waiting until {@code what}".
   */
  public static void until(String what, Duration within, Probe<Boolean> condition) {
    until(what, within, condition, Boolean::booleanValue);
  }

  /**
   * Returns the first value of {@code probe} that {@code done} accepts; fails after {@code within}
   * naming {@code what} and the last value seen.
   */
  public static <T> T until(
      String what, Duration within, Probe<? extends T> probe, Predicate<? super T> done) {
    long deadline = System.nanoTime() + within.toNanos();
    long pause = FIRST_PAUSE_MILLIS;
    while (true) {
      T seen = look(what, probe);
      if (done.test(seen)) {
        return seen;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after "
                + within
                + " waiting until "
                + what
                + (seen instanceof Boolean ? "" : "; last seen: " + seen));
      }
      try {
        Thread.sleep(pause); // the poll interval between two looks, not a wait for the event
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting until " + what, e);
      }
      pause = Math.min(LONGEST_PAUSE_MILLIS, pause * 2);
    }
  }

  private static <T> T look(String what, Probe<? extends T> probe) {
    try {
      return probe.look();
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting until " + what, e);
    } catch (Exception e) {
      throw new AssertionError("the look failed while waiting until " + what, e);
    }
  }
}
