package dev.spendgateway.edge.log;

import dev.spendgateway.policy.money.Micros;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * An access line being filled in as a call proceeds: immutable, each {@code withX} returns a new
 * line, so a line handed to another stage (a settle that completes later, a stream's end) can never
 * be changed under it. {@link #record} turns it into the {@link AccessRecord} that is written.
 * Metadata only, as {@link AccessRecord}: there is no field for a prompt, an output, a key or a
 * token.
 *
 * @param startedNanos monotonic time the call arrived, for the duration
 * @param profile the routing profile of a router call, null on the provider routes
 * @param dataClass the data class the call carried, null until known
 */
public record AccessLine(
    Instant time,
    long startedNanos,
    String requestId,
    String route,
    String provider,
    String lane,
    String brand,
    String model,
    int status,
    Long reservedMicros,
    Long settledMicros,
    String errorClass,
    boolean failover,
    String profile,
    String dataClass) {

  /** A call that arrived at {@code time} on {@code route}; nothing else known yet. */
  public static AccessLine arrived(Instant time, long startedNanos, String route) {
    return new AccessLine(
        time,
        startedNanos,
        null,
        route,
        null,
        null,
        null,
        null,
        0,
        null,
        null,
        null,
        false,
        null,
        null);
  }

  public AccessLine withRequestId(String id) {
    return with(d -> d.requestId = id);
  }

  public AccessLine withProvider(String name) {
    return with(d -> d.provider = name);
  }

  /** The spend lane's wire name and the brand or preview id (null on the free lane). */
  public AccessLine withSpend(String laneName, String subject) {
    return with(
        d -> {
          d.lane = laneName;
          d.brand = subject;
        });
  }

  public AccessLine withModel(String name) {
    return with(d -> d.model = name);
  }

  /** The HTTP status the caller gets (0 for an attempt whose answer never reached the caller). */
  public AccessLine withStatus(int code) {
    return with(d -> d.status = code);
  }

  public AccessLine withReserved(long micros) {
    return with(d -> d.reservedMicros = micros);
  }

  /** What the ledger closed the reservation at; null when it was not (or not knowingly) closed. */
  public AccessLine withSettled(Long micros) {
    return with(d -> d.settledMicros = micros);
  }

  /** A safe, fixed error class; null for a call that went as it should. */
  public AccessLine withError(String safeClass) {
    return with(d -> d.errorClass = safeClass);
  }

  /**
   * Sets the error class only when none is set yet: the first thing that went wrong names the line.
   */
  public AccessLine withErrorIfNone(String safeClass) {
    return errorClass == null ? withError(safeClass) : this;
  }

  public AccessLine withFailover(boolean answeredByFallback) {
    return with(d -> d.failover = answeredByFallback);
  }

  /** The routing profile a router call named ({@code model}); null on the provider routes. */
  public AccessLine withProfile(String name) {
    return with(d -> d.profile = name);
  }

  /** The data class the call carried ({@code x-data-class} or the default): its name only. */
  public AccessLine withDataClass(String name) {
    return with(d -> d.dataClass = name);
  }

  /** A new line: this one with what {@code change} sets on a draft of it. */
  private AccessLine with(Consumer<Draft> change) {
    Draft draft = new Draft(this);
    change.accept(draft);
    return draft.line();
  }

  /** A line's fields while one wither changes some of them; never leaves this class. */
  private static final class Draft {
    private final Instant time;
    private final long startedNanos;
    private final String route;
    String requestId;
    String provider;
    String lane;
    String brand;
    String model;
    int status;
    Long reservedMicros;
    Long settledMicros;
    String errorClass;
    boolean failover;
    String profile;
    String dataClass;

    Draft(AccessLine from) {
      time = from.time;
      startedNanos = from.startedNanos;
      route = from.route;
      requestId = from.requestId;
      provider = from.provider;
      lane = from.lane;
      brand = from.brand;
      model = from.model;
      status = from.status;
      reservedMicros = from.reservedMicros;
      settledMicros = from.settledMicros;
      errorClass = from.errorClass;
      failover = from.failover;
      profile = from.profile;
      dataClass = from.dataClass;
    }

    AccessLine line() {
      return new AccessLine(
          time,
          startedNanos,
          requestId,
          route,
          provider,
          lane,
          brand,
          model,
          status,
          reservedMicros,
          settledMicros,
          errorClass,
          failover,
          profile,
          dataClass);
    }
  }

  /** The record to write, with the duration up to {@code nowNanos}. */
  public AccessRecord record(long nowNanos) {
    return new AccessRecord(
        time,
        requestId,
        route,
        provider,
        lane,
        brand,
        model,
        status,
        reservedMicros == null ? null : Micros.toUsd(reservedMicros).toPlainString(),
        settledMicros == null ? null : Micros.toUsd(settledMicros).toPlainString(),
        Math.max(0, nowNanos - startedNanos) / 1_000_000,
        errorClass,
        failover,
        profile,
        dataClass);
  }
}
