package dev.spendgateway.edge;

import com.typesafe.config.Config;
import dev.spendgateway.policy.request.PolicyLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The timers on a provider call's path and the rules between them, checked once at start so a
 * configuration that would cut a call the provider is still serving never runs.
 *
 * <p>A provider may send the headers of a non-streamed answer only when it has generated all of it
 * (up to its {@code response-start-timeout}) and may pause inside a stream (up to its {@code
 * idle-timeout}). Every timer that runs meanwhile must wait at least that long, or the gateway cuts
 * a call that is still being billed — and the caller's SDK retries it, billing a second generation:
 *
 * <ul>
 *   <li>the server's {@code idle-timeout} (no byte on the caller's connection while the provider is
 *       silent) ≥ every provider's response-start and idle timeouts;
 *   <li>the server's {@code request-timeout} (the response headers must be ready) &gt; every
 *       response-start timeout;
 *   <li>{@code providers.max-call-duration} ≥ every response-start timeout, and the ledger's {@code
 *       reservation-timeout} ≥ max-call-duration + {@code providers.drain-timeout} + {@link
 *       #RESERVATION_MARGIN}: a reservation must not expire at its worst case while its call may
 *       still run or drain;
 *   <li>the server's {@code max-content-length} ≥ the policy's transcription file limit + {@link
 *       #FORM_OVERHEAD_BYTES}: the parser must not cut an upload the policy allows.
 * </ul>
 *
 * <p>The breaker's {@code call-timeout} must also cover every response-start timeout; the failover
 * settings raise it when it does not, so that one is reported by {@link #raised()}, not refused.
 *
 * <p>Pure: built from values, no I/O; {@link #fromConfig} reads them.
 */
public record TimeoutBudget(
    Duration serverIdleTimeout,
    Duration serverRequestTimeout,
    long serverMaxContentLength,
    List<UpstreamTimers> upstreams,
    Duration breakerCallTimeout,
    Duration maxCallDuration,
    Duration drainTimeout,
    Duration reservationTimeout,
    long transcriptionMaxFileBytes,
    Duration routerChain) {

  /** One provider's silence limits ({@code providers.<name>.*}). */
  public record UpstreamTimers(String provider, Duration responseStart, Duration idle) {}

  /**
   * Between a call's last possible byte (its max duration plus the drain) and its reservation's
   * expiry.
   */
  public static final Duration RESERVATION_MARGIN = Duration.ofMinutes(1);

  /** Room for the multipart framing and the text fields around a transcription's audio file. */
  public static final long FORM_OVERHEAD_BYTES = 64 * 1024;

  /** Pekko's {@code infinite}, as a duration longer than any rule compares it with. */
  static final Duration INFINITE = Duration.ofDays(365L * 100);

  public static final String SERVER_IDLE = "pekko.http.server.idle-timeout";
  public static final String SERVER_REQUEST = "pekko.http.server.request-timeout";
  public static final String SERVER_MAX_CONTENT = "pekko.http.server.parsing.max-content-length";
  public static final String BREAKER_CALL = "failover.breaker.call-timeout";
  public static final String MAX_CALL = "providers.max-call-duration";
  public static final String DRAIN = "providers.drain-timeout";
  public static final String RESERVATION = "ledger.reservation-timeout";
  public static final String TRANSCRIPTION_LIMIT = "policy.transcription-max-file-bytes";
  public static final String BUDGETS = "failover.budgets";
  public static final String PACE_WAIT = "failover.rate-limits.max-wait";

  public TimeoutBudget {
    upstreams = List.copyOf(upstreams);
  }

  /**
   * Reads the timers from the application's resolved root config; empty when it holds no {@code
   * providers} or {@code ledger} block (a partial config, as tests of the edge alone build).
   */
  public static Optional<TimeoutBudget> fromConfig(Config root) {
    if (!root.hasPath("providers")
        || !root.hasPath("ledger.reservation-timeout")
        || !root.hasPath(SERVER_IDLE)) {
      return Optional.empty();
    }
    List<UpstreamTimers> upstreams = new ArrayList<>();
    for (String provider : List.of("openai", "anthropic")) {
      Config p = root.getConfig("providers." + provider);
      upstreams.add(
          new UpstreamTimers(
              provider, p.getDuration("response-start-timeout"), p.getDuration("idle-timeout")));
    }
    PolicyLimits policy =
        root.hasPath("policy")
            ? PolicyLimits.fromMap(root.getConfig("policy").root().unwrapped())
            : PolicyLimits.defaults();
    return Optional.of(
        new TimeoutBudget(
            durationOrInfinite(root, SERVER_IDLE),
            root.hasPath(SERVER_REQUEST) ? durationOrInfinite(root, SERVER_REQUEST) : INFINITE,
            root.hasPath(SERVER_MAX_CONTENT)
                ? bytesOrInfinite(root, SERVER_MAX_CONTENT)
                : Long.MAX_VALUE,
            upstreams,
            root.hasPath(BREAKER_CALL) ? root.getDuration(BREAKER_CALL) : INFINITE,
            root.hasPath(MAX_CALL) ? root.getDuration(MAX_CALL) : INFINITE,
            root.getDuration(DRAIN),
            root.getDuration(RESERVATION),
            policy.transcriptionMaxFileBytes(),
            routerChain(root)));
  }

  /**
   * How late a routed call may start its last attempt: the longest {@code
   * failover.budgets.*.total-time} plus the pace's {@code max-wait} (zero without a failover
   * block).
   */
  static Duration routerChain(Config root) {
    Duration longest = Duration.ZERO;
    if (root.hasPath(BUDGETS)) {
      Config budgets = root.getConfig(BUDGETS);
      for (String pool : budgets.root().keySet()) {
        Duration total = budgets.getDuration(pool + ".total-time");
        longest = total.compareTo(longest) > 0 ? total : longest;
      }
    }
    return root.hasPath(PACE_WAIT) ? longest.plus(root.getDuration(PACE_WAIT)) : longest;
  }

  private static Duration durationOrInfinite(Config c, String key) {
    return isInfinite(c, key) ? INFINITE : c.getDuration(key);
  }

  private static long bytesOrInfinite(Config c, String key) {
    return isInfinite(c, key) ? Long.MAX_VALUE : c.getBytes(key);
  }

  private static boolean isInfinite(Config c, String key) {
    return c.getValue(key).unwrapped() instanceof String s && s.trim().equals("infinite");
  }

  /**
   * Every rule this configuration breaks, one line each naming the keys, their values and the
   * bound; empty when the gateway may start.
   */
  public List<String> refusals() {
    List<String> out = new ArrayList<>();
    for (UpstreamTimers u : upstreams) {
      String start = "providers." + u.provider() + ".response-start-timeout";
      String idle = "providers." + u.provider() + ".idle-timeout";
      if (serverIdleTimeout.compareTo(u.responseStart()) < 0) {
        out.add(
            shorter(
                SERVER_IDLE,
                serverIdleTimeout,
                start,
                u.responseStart(),
                "the server would reset a call while the provider still generates its answer"));
      }
      if (serverIdleTimeout.compareTo(u.idle()) < 0) {
        out.add(
            shorter(
                SERVER_IDLE,
                serverIdleTimeout,
                idle,
                u.idle(),
                "the server would reset a stream the provider only paused"));
      }
      if (serverRequestTimeout.compareTo(u.responseStart()) <= 0) {
        out.add(
            SERVER_REQUEST
                + " ("
                + show(serverRequestTimeout)
                + ") must be longer than "
                + start
                + " ("
                + show(u.responseStart())
                + "): a long answer's headers would turn into a 503 while the provider bills it");
      }
      if (maxCallDuration.compareTo(u.responseStart()) < 0) {
        out.add(
            shorter(
                MAX_CALL,
                maxCallDuration,
                start,
                u.responseStart(),
                "a call would be cut before its answer may even start"));
      }
    }
    Duration lastByte = maxCallDuration.plus(drainTimeout).plus(RESERVATION_MARGIN);
    if (reservationTimeout.compareTo(lastByte) < 0) {
      out.add(
          RESERVATION
              + " ("
              + show(reservationTimeout)
              + ") must be >= "
              + MAX_CALL
              + " ("
              + show(maxCallDuration)
              + ") + "
              + DRAIN
              + " ("
              + show(drainTimeout)
              + ") + "
              + show(RESERVATION_MARGIN)
              + ": a reservation would expire at its worst case while its call may still run; lower "
              + MAX_CALL
              + " or raise "
              + RESERVATION);
    }
    long upload = transcriptionMaxFileBytes + FORM_OVERHEAD_BYTES;
    if (serverMaxContentLength < upload) {
      out.add(
          SERVER_MAX_CONTENT
              + " ("
              + serverMaxContentLength
              + " bytes) must be >= "
              + TRANSCRIPTION_LIMIT
              + " ("
              + transcriptionMaxFileBytes
              + ") + "
              + FORM_OVERHEAD_BYTES
              + " bytes of form: the parser would cut an upload"
              + " the policy allows");
    }
    return List.copyOf(out);
  }

  /**
   * The timers the gateway raises itself rather than refusing, one line each (for a start-up
   * warning).
   */
  public List<String> raised() {
    List<String> out = new ArrayList<>();
    for (UpstreamTimers u : upstreams) {
      if (breakerCallTimeout.compareTo(u.responseStart()) < 0) {
        out.add(
            BREAKER_CALL
                + " ("
                + show(breakerCallTimeout)
                + ") is shorter than providers."
                + u.provider()
                + ".response-start-timeout ("
                + show(u.responseStart())
                + "); the breaker times calls for that long"
                + " plus a margin instead, so a long answer is not a provider failure");
      }
    }
    return List.copyOf(out);
  }

  /**
   * Start-up warnings: {@link #raised()}, and a server idle-timeout too short for a routed call's
   * chain of attempts. The caller's connection is silent while the router waits between attempts
   * and while its last attempt (started up to {@link #routerChain} in) generates; closed meanwhile,
   * the caller gets no answer for a call the provider bills. Warned, not refused: a call that fails
   * over early (the usual case) is not affected.
   */
  public List<String> warnings() {
    List<String> out = new ArrayList<>(raised());
    for (UpstreamTimers u : upstreams) {
      Duration needed = u.responseStart().plus(routerChain);
      if (routerChain.compareTo(Duration.ZERO) > 0 && serverIdleTimeout.compareTo(needed) < 0) {
        out.add(
            SERVER_IDLE
                + " ("
                + show(serverIdleTimeout)
                + ") is shorter than providers."
                + u.provider()
                + ".response-start-timeout ("
                + show(u.responseStart())
                + ") + the longest "
                + BUDGETS
                + ".*.total-time and "
                + PACE_WAIT
                + " ("
                + show(routerChain)
                + "): a routed call that fails over late in its budget would lose its caller"
                + " while the fallback still generates the answer it bills");
        break;
      }
    }
    return List.copyOf(out);
  }

  /** The problem line for {@link GatewaySettings#startupProblem}: every refusal, or empty. */
  public Optional<String> startupProblem() {
    List<String> refusals = refusals();
    return refusals.isEmpty()
        ? Optional.empty()
        : Optional.of(
            "timeouts on a provider call's path do not fit together: "
                + String.join("; ", refusals));
  }

  private static String shorter(
      String key, Duration value, String bound, Duration boundValue, String why) {
    return key
        + " ("
        + show(value)
        + ") is shorter than "
        + bound
        + " ("
        + show(boundValue)
        + "): "
        + why
        + "; raise "
        + key
        + " or lower "
        + bound;
  }

  /** {@code 600s}, {@code 1500ms}, {@code infinite}: as an operator writes it in the conf. */
  static String show(Duration d) {
    if (d.compareTo(INFINITE) >= 0) {
      return "infinite";
    }
    long ms = d.toMillis();
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }
}
