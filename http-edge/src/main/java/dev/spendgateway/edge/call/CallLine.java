package dev.spendgateway.edge.call;

import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.edge.log.AccessLog;
import dev.spendgateway.edge.log.AccessRecord;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;

/**
 * The call's own access line, for a call that ends without an attempt writing it (refused before
 * any reservation, or a gateway-made answer after failed attempts): what is known so far, kept as
 * one immutable {@link AccessLine} swapped atomically, and written at most once.
 */
public final class CallLine {
  private final AtomicReference<AccessLine> known;
  private final AtomicBoolean written = new AtomicBoolean();
  private final LongSupplier nanoTime;

  public CallLine(AccessLine arrived, LongSupplier nanoTime) {
    this.known = new AtomicReference<>(arrived);
    this.nanoTime = nanoTime;
  }

  /** Adds what was learned; returns the line as it now is. */
  public AccessLine learn(UnaryOperator<AccessLine> fact) {
    return known.updateAndGet(fact);
  }

  /**
   * Writes the line with the caller's status and the error word, once; empty when written already.
   */
  public Optional<AccessRecord> write(int status, String errorClass) {
    if (!written.compareAndSet(false, true)) {
      return Optional.empty();
    }
    AccessRecord record =
        known.get().withStatus(status).withError(errorClass).record(nanoTime.getAsLong());
    AccessLog.write(record);
    return Optional.of(record);
  }
}
