package dev.spendgateway.policy.caps;

/** A cap as it stands: its limit, what is settled and what open reservations still hold. */
public record CapUse(CapKey key, long limitMicros, long settledMicros, long reservedMicros) {
  /** Headroom = cap − settled − open reservations; negative when settled costs ran over. */
  public long headroomMicros() {
    return limitMicros - settledMicros - reservedMicros;
  }

  public boolean admits(long amountMicros) {
    return amountMicros <= headroomMicros();
  }
}
