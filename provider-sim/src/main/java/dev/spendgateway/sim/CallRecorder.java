package dev.spendgateway.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A bounded, lock-free ring of the last {@code capacity} calls. Writers never block each other (a
 * counter claims a slot); a reader takes a best-effort snapshot, which is all a test needs once the
 * calls it made have been answered.
 */
final class CallRecorder {
  private final AtomicReferenceArray<ReceivedCall> ring;
  private final AtomicLong next = new AtomicLong();

  CallRecorder(int capacity) {
    this.ring = new AtomicReferenceArray<>(capacity);
  }

  /** Claims the next sequence number (1-based). */
  long nextSeq() {
    return next.incrementAndGet();
  }

  void record(ReceivedCall call) {
    ring.set((int) ((call.seq() - 1) % ring.length()), call);
  }

  /** Calls seen since start or the last clear, including those the ring no longer holds. */
  long total() {
    return next.get();
  }

  /** The retained calls, oldest first. */
  List<ReceivedCall> snapshot() {
    long end = next.get();
    long start = Math.max(0, end - ring.length());
    List<ReceivedCall> out = new ArrayList<>((int) (end - start));
    for (long seq = start + 1; seq <= end; seq++) {
      ReceivedCall c = ring.get((int) ((seq - 1) % ring.length()));
      // A slot may still hold an older call (writer not done yet) or be empty; skip those.
      if (c != null && c.seq() == seq) {
        out.add(c);
      }
    }
    return out;
  }

  void clear() {
    next.set(0);
    for (int i = 0; i < ring.length(); i++) {
      ring.set(i, null);
    }
  }
}
