package dev.spendgateway.ledger;

import com.typesafe.config.Config;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The ledger's settings, read from the {@code ledger} block of the config (see {@code
 * conf/ledger.conf} for what each key means and why it has its default).
 */
public record LedgerSettings(
    CapLimits caps,
    Duration reservationTimeout,
    Duration expiryCheckInterval,
    int snapshotEvery,
    Duration retention,
    Duration compactionInterval,
    Duration askTimeout,
    int maxBatch,
    boolean createSchema,
    long maxAdjustmentMicros,
    int maxSettleMultiple,
    int maxQueuedCommands,
    Duration idempotencyWindow,
    Duration idempotencyHorizon,
    ZoneId windowZone) {

  /** Default of {@code ledger.window-zone} when a config leaves it out (see conf/ledger.conf). */
  public static final ZoneId DEFAULT_WINDOW_ZONE = ZoneId.of("UTC");

  /** The settings with windows in the default zone, UTC. */
  public LedgerSettings(
      CapLimits caps,
      Duration reservationTimeout,
      Duration expiryCheckInterval,
      int snapshotEvery,
      Duration retention,
      Duration compactionInterval,
      Duration askTimeout,
      int maxBatch,
      boolean createSchema,
      long maxAdjustmentMicros,
      int maxSettleMultiple,
      int maxQueuedCommands,
      Duration idempotencyWindow,
      Duration idempotencyHorizon) {
    this(
        caps,
        reservationTimeout,
        expiryCheckInterval,
        snapshotEvery,
        retention,
        compactionInterval,
        askTimeout,
        maxBatch,
        createSchema,
        maxAdjustmentMicros,
        maxSettleMultiple,
        maxQueuedCommands,
        idempotencyWindow,
        idempotencyHorizon,
        DEFAULT_WINDOW_ZONE);
  }

  /**
   * Default of {@code ledger.idempotency-window} when a config leaves it out (see
   * conf/ledger.conf).
   */
  public static final Duration DEFAULT_IDEMPOTENCY_WINDOW = Duration.ofHours(24);

  /**
   * Default of {@code ledger.idempotency-horizon} when a config leaves it out (see
   * conf/ledger.conf).
   */
  public static final Duration DEFAULT_IDEMPOTENCY_HORIZON = Duration.ofDays(7);

  /** The settings without the idempotency window and horizon: those take their defaults. */
  public LedgerSettings(
      CapLimits caps,
      Duration reservationTimeout,
      Duration expiryCheckInterval,
      int snapshotEvery,
      Duration retention,
      Duration compactionInterval,
      Duration askTimeout,
      int maxBatch,
      boolean createSchema,
      long maxAdjustmentMicros,
      int maxSettleMultiple,
      int maxQueuedCommands) {
    this(
        caps,
        reservationTimeout,
        expiryCheckInterval,
        snapshotEvery,
        retention,
        compactionInterval,
        askTimeout,
        maxBatch,
        createSchema,
        maxAdjustmentMicros,
        maxSettleMultiple,
        maxQueuedCommands,
        DEFAULT_IDEMPOTENCY_WINDOW,
        DEFAULT_IDEMPOTENCY_HORIZON);
  }

  /**
   * Default of {@code ledger.max-settle-multiple} when a config leaves it out (see
   * conf/ledger.conf).
   */
  public static final int DEFAULT_MAX_SETTLE_MULTIPLE = 10;

  /**
   * Default of {@code ledger.max-queued-commands} when a config leaves it out (see
   * conf/ledger.conf).
   */
  public static final int DEFAULT_MAX_QUEUED_COMMANDS = 20_000;

  /** The settings without the settle bound and queue bound: those take their defaults. */
  public LedgerSettings(
      CapLimits caps,
      Duration reservationTimeout,
      Duration expiryCheckInterval,
      int snapshotEvery,
      Duration retention,
      Duration compactionInterval,
      Duration askTimeout,
      int maxBatch,
      boolean createSchema,
      long maxAdjustmentMicros) {
    this(
        caps,
        reservationTimeout,
        expiryCheckInterval,
        snapshotEvery,
        retention,
        compactionInterval,
        askTimeout,
        maxBatch,
        createSchema,
        maxAdjustmentMicros,
        DEFAULT_MAX_SETTLE_MULTIPLE,
        DEFAULT_MAX_QUEUED_COMMANDS);
  }

  public LedgerSettings {
    if (snapshotEvery < 1 || maxBatch < 1) {
      throw new IllegalArgumentException("ledger.snapshot-every and ledger.max-batch must be >= 1");
    }
    if (reservationTimeout.isNegative() || reservationTimeout.isZero()) {
      throw new IllegalArgumentException("ledger.reservation-timeout must be positive");
    }
    if (retention.compareTo(reservationTimeout) <= 0) {
      // An open reservation's cap windows must outlive it, or closing it would find them gone.
      throw new IllegalArgumentException(
          "ledger.retention must be longer than ledger.reservation-timeout");
    }
    if (maxAdjustmentMicros <= 0) {
      throw new IllegalArgumentException("ledger.max-adjustment-usd must be positive");
    }
    if (maxSettleMultiple < 1) {
      throw new IllegalArgumentException("ledger.max-settle-multiple must be >= 1");
    }
    if (idempotencyWindow == null
        || idempotencyWindow.isNegative()
        || idempotencyWindow.isZero()
        || idempotencyHorizon == null
        || idempotencyHorizon.isNegative()) {
      throw new IllegalArgumentException(
          "ledger.idempotency-window must be positive, ledger.idempotency-horizon >= 0");
    }
    if (windowZone == null) {
      throw new IllegalArgumentException("ledger.window-zone must be an IANA zone id");
    }
    if (maxQueuedCommands < maxBatch) {
      // A full batch must fit in the queue, or group commit could never send one.
      throw new IllegalArgumentException("ledger.max-queued-commands must be >= ledger.max-batch");
    }
  }

  /** Reads the {@code ledger} block; {@code config} is the whole (resolved) application config. */
  public static LedgerSettings fromConfig(Config config) {
    Config ledger = config.getConfig("ledger");
    Config caps = ledger.getConfig("caps");
    return new LedgerSettings(
        new CapLimits(
            cap(caps, "global-daily-usd"),
            cap(caps, "global-monthly-usd"),
            cap(caps, "free-daily-usd"),
            cap(caps, "trial-daily-usd"),
            cap(caps, "preview-lifetime-usd")),
        ledger.getDuration("reservation-timeout"),
        ledger.getDuration("expiry-check-interval"),
        ledger.getInt("snapshot-every"),
        ledger.getDuration("retention"),
        ledger.getDuration("compaction-interval"),
        ledger.getDuration("ask-timeout"),
        ledger.getInt("max-batch"),
        ledger.getBoolean("create-schema"),
        usd(ledger, "max-adjustment-usd", "ledger.max-adjustment-usd"),
        ledger.hasPath("max-settle-multiple")
            ? ledger.getInt("max-settle-multiple")
            : DEFAULT_MAX_SETTLE_MULTIPLE,
        ledger.hasPath("max-queued-commands")
            ? ledger.getInt("max-queued-commands")
            : DEFAULT_MAX_QUEUED_COMMANDS,
        ledger.hasPath("idempotency-window")
            ? ledger.getDuration("idempotency-window")
            : DEFAULT_IDEMPOTENCY_WINDOW,
        ledger.hasPath("idempotency-horizon")
            ? ledger.getDuration("idempotency-horizon")
            : DEFAULT_IDEMPOTENCY_HORIZON,
        ledger.hasPath("window-zone")
            ? windowZone(ledger.getString("window-zone"))
            : DEFAULT_WINDOW_ZONE);
  }

  /**
   * {@code ledger.window-zone}: an IANA zone id ({@code Europe/Berlin}, {@code UTC}). A fixed
   * offset ({@code +03:00}) is refused: it has no DST, so it is not the company's calendar for
   * long, and a typo of one reads as a valid zone.
   */
  static ZoneId windowZone(String value) {
    String text = value == null ? "" : value.trim();
    try {
      ZoneId zone = ZoneId.of(text);
      if (!(zone instanceof ZoneOffset)
          && !text.startsWith("UTC+")
          && !text.startsWith("UTC-")
          && !text.startsWith("GMT+")
          && !text.startsWith("GMT-")) {
        return zone;
      }
    } catch (java.time.DateTimeException e) {
      // named below
    }
    throw new IllegalArgumentException(
        "ledger.window-zone must be an IANA zone id such as UTC or Europe/Berlin, not \""
            + value
            + "\"");
  }

  public LedgerSettings withCaps(CapLimits newCaps) {
    return new LedgerSettings(
        newCaps,
        reservationTimeout,
        expiryCheckInterval,
        snapshotEvery,
        retention,
        compactionInterval,
        askTimeout,
        maxBatch,
        createSchema,
        maxAdjustmentMicros,
        maxSettleMultiple,
        maxQueuedCommands,
        idempotencyWindow,
        idempotencyHorizon,
        windowZone);
  }

  /** The same settings with windows counted in {@code zone} ({@code ledger.window-zone}). */
  public LedgerSettings withWindowZone(ZoneId zone) {
    return new LedgerSettings(
        caps,
        reservationTimeout,
        expiryCheckInterval,
        snapshotEvery,
        retention,
        compactionInterval,
        askTimeout,
        maxBatch,
        createSchema,
        maxAdjustmentMicros,
        maxSettleMultiple,
        maxQueuedCommands,
        idempotencyWindow,
        idempotencyHorizon,
        zone);
  }

  /** The same settings with another idempotency window and horizon (tests scale them down). */
  public LedgerSettings withIdempotency(Duration window, Duration horizon) {
    return new LedgerSettings(
        caps,
        reservationTimeout,
        expiryCheckInterval,
        snapshotEvery,
        retention,
        compactionInterval,
        askTimeout,
        maxBatch,
        createSchema,
        maxAdjustmentMicros,
        maxSettleMultiple,
        maxQueuedCommands,
        window,
        horizon,
        windowZone);
  }

  /** A cap in micro-dollars; its own key named when it is negative (CapLimits cannot name it). */
  private static long cap(Config caps, String key) {
    long micros = usd(caps, key, "ledger.caps." + key);
    if (micros < 0) {
      throw new IllegalArgumentException(
          "ledger.caps." + key + " must not be negative (0 closes the pool)");
    }
    return micros;
  }

  private static long usd(Config config, String key, String fullName) {
    try {
      return Micros.ofUsdExact(new BigDecimal(config.getString(key)));
    } catch (ArithmeticException | NumberFormatException e) {
      throw new IllegalArgumentException(
          fullName + " must be a dollar amount with at most 6 decimals", e);
    }
  }
}
