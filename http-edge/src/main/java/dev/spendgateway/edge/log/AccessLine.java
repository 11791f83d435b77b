package dev.spendgateway.edge.log;

import dev.spendgateway.policy.money.Micros;
import java.time.Instant;

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
    return new AccessLine(
        time,
        startedNanos,
        id,
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

  public AccessLine withProvider(String name) {
    return new AccessLine(
        time,
        startedNanos,
        requestId,
        route,
        name,
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

  /** The spend lane's wire name and the brand or preview id (null on the free lane). */
  public AccessLine withSpend(String laneName, String subject) {
    return new AccessLine(
        time,
        startedNanos,
        requestId,
        route,
        provider,
        laneName,
        subject,
        model,
        status,
        reservedMicros,
        settledMicros,
        errorClass,
        failover,
        profile,
        dataClass);
  }

  public AccessLine withModel(String name) {
    return new AccessLine(
        time,
        startedNanos,
        requestId,
        route,
        provider,
        lane,
        brand,
        name,
        status,
        reservedMicros,
        settledMicros,
        errorClass,
        failover,
        profile,
        dataClass);
  }

  /** The HTTP status the caller gets (0 for an attempt whose answer never reached the caller). */
  public AccessLine withStatus(int code) {
    return new AccessLine(
        time,
        startedNanos,
        requestId,
        route,
        provider,
        lane,
        brand,
        model,
        code,
        reservedMicros,
        settledMicros,
        errorClass,
        failover,
        profile,
        dataClass);
  }

  public AccessLine withReserved(long micros) {
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
        micros,
        settledMicros,
        errorClass,
        failover,
        profile,
        dataClass);
  }

  /** What the ledger closed the reservation at; null when it was not (or not knowingly) closed. */
  public AccessLine withSettled(Long micros) {
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
        micros,
        errorClass,
        failover,
        profile,
        dataClass);
  }

  /** A safe, fixed error class; null for a call that went as it should. */
  public AccessLine withError(String safeClass) {
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
        safeClass,
        failover,
        profile,
        dataClass);
  }

  /**
   * Sets the error class only when none is set yet: the first thing that went wrong names the line.
   */
  public AccessLine withErrorIfNone(String safeClass) {
    return errorClass == null ? withError(safeClass) : this;
  }

  public AccessLine withFailover(boolean answeredByFallback) {
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
        answeredByFallback,
        profile,
        dataClass);
  }

  /** The routing profile a router call named ({@code model}); null on the provider routes. */
  public AccessLine withProfile(String name) {
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
        name,
        dataClass);
  }

  /** The data class the call carried ({@code x-data-class} or the default): its name only. */
  public AccessLine withDataClass(String name) {
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
        name);
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

  /** Writes the line now (callers make sure a call's line is written once). */
  public void write(long nowNanos) {
    AccessLog.write(record(nowNanos));
  }
}
