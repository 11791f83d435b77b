package dev.spendgateway.policy.caps;

/** What one cap window holds: settled cost and the worst case of its open reservations. */
public record Spend(long settledMicros, long reservedMicros) {
  public static final Spend NONE = new Spend(0, 0);

  public Spend withReserved(long amountMicros) {
    return new Spend(settledMicros, reservedMicros + amountMicros);
  }

  /** A reservation of {@code reservedMicros} closes at {@code actualMicros} of real cost. */
  public Spend withClosed(long reservedMicros, long actualMicros) {
    return new Spend(settledMicros + actualMicros, this.reservedMicros - reservedMicros);
  }

  public Spend withAdjustment(long deltaMicros) {
    return new Spend(settledMicros + deltaMicros, reservedMicros);
  }

  public boolean isEmpty() {
    return settledMicros == 0 && reservedMicros == 0;
  }
}
