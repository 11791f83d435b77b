package dev.spendgateway.edge;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Optional;

/**
 * The edge's own settings ({@code gateway.*} in conf/http.conf).
 *
 * @param host interface to bind
 * @param port TCP port to bind (0 picks a free one, used by tests)
 * @param http2Port TCP port of the HTTP/2 cleartext listener ({@code gateway.http2-port}); 0 = off
 * @param token the gateway token callers present; empty means "not configured"
 * @param adminToken the operator's token, the only credential for the {@code /admin} routes; empty
 *     means those routes are off
 * @param shutdownDrain how long SIGTERM waits for in-flight calls
 * @param readinessTimeout how long /readyz waits on the ledger before answering 503
 * @param timeouts the timers on a provider call's path, checked at start; empty when the config
 *     holds only the edge's part (tests of the edge alone)
 */
public record GatewaySettings(
    String host,
    int port,
    int http2Port,
    String token,
    String adminToken,
    Duration shutdownDrain,
    Duration readinessTimeout,
    Optional<TimeoutBudget> timeouts) {

  /** Settings with no provider call path to check. */
  public GatewaySettings(
      String host,
      int port,
      String token,
      String adminToken,
      Duration shutdownDrain,
      Duration readinessTimeout) {
    this(host, port, 0, token, adminToken, shutdownDrain, readinessTimeout, Optional.empty());
  }

  public static GatewaySettings fromConfig(Config config) {
    // Full paths, so a wrong value's message names the key (gateway.port), not its last segment.
    return new GatewaySettings(
        config.getString("gateway.host"),
        config.getInt("gateway.port"),
        config.getInt("gateway.http2-port"),
        config.getString("gateway.token"),
        config.getString("gateway.admin-token"),
        config.getDuration("gateway.shutdown-drain"),
        config.getDuration("gateway.readiness-timeout"),
        TimeoutBudget.fromConfig(config));
  }

  public boolean hasToken() {
    return !token.isBlank();
  }

  /** Whether the {@code /admin} routes are on (an operator token is configured). */
  public boolean hasAdminToken() {
    return !adminToken.isBlank();
  }

  /**
   * Why the gateway must not start with these settings, as the one line to print; empty when it
   * may. The admin token must differ from the caller token: every caller holds that one, and the
   * admin routes can credit away every cap. The timers on a provider call's path must fit together
   * ({@link TimeoutBudget}): a timer shorter than what it must cover cuts calls the provider bills.
   *
   * @param demo {@code --demo} generates its own tokens, so a missing caller token is no problem
   *     there
   */
  public Optional<String> startupProblem(boolean demo) {
    if (!demo && !hasToken()) {
      return Optional.of(
          "GATEWAY_TOKEN is not set; export it (the secret callers send as x-api-key or "
              + "Authorization: Bearer), or run 'bin/gateway --demo'");
    }
    if (hasAdminToken() && adminToken.trim().equals(token.trim())) {
      return Optional.of(
          "GATEWAY_ADMIN_TOKEN equals GATEWAY_TOKEN; the operator's token must be a different "
              + "secret (every caller holds GATEWAY_TOKEN), or leave GATEWAY_ADMIN_TOKEN unset to turn /admin off");
    }
    if (http2Port < 0 || http2Port > 65535 || (http2Port != 0 && http2Port == port)) {
      return Optional.of(
          "gateway.http2-port = "
              + http2Port
              + " cannot be used: it must be 0 "
              + "(no HTTP/2 listener) or a port from 1 to 65535 other than gateway.port ("
              + port
              + "); set it with JAVA_OPTS=-Dgateway.http2-port=N");
    }
    return timeouts.flatMap(TimeoutBudget::startupProblem);
  }

  /**
   * What the gateway adjusts itself rather than refusing (one line each, for a start-up warning): a
   * breaker call-timeout shorter than a provider's response-start-timeout, and a server
   * idle-timeout too short for a routed call's chain of attempts ({@link TimeoutBudget#warnings}).
   */
  public java.util.List<String> startupWarnings() {
    return timeouts.map(TimeoutBudget::warnings).orElse(java.util.List.of());
  }

  /** Whether the bind address reaches beyond this machine (worth a warning: we hold real keys). */
  public boolean bindsBeyondLoopback() {
    if (host.equals("localhost")) {
      return false;
    }
    try {
      // Literal addresses only (no DNS lookup at start): 127.0.0.0/8 and ::1 in any spelling.
      return !(isIpLiteral(host) && java.net.InetAddress.getByName(host).isLoopbackAddress());
    } catch (java.net.UnknownHostException e) {
      return true;
    }
  }

  private static boolean isIpLiteral(String host) {
    return host.matches("[0-9.]+") || host.contains(":");
  }

  /** Never print a token: records' generated toString would. */
  @Override
  public String toString() {
    return "GatewaySettings[host="
        + host
        + ", port="
        + port
        + ", http2Port="
        + http2Port
        + ", token=<redacted>, adminToken="
        + (hasAdminToken() ? "<redacted>" : "<unset>")
        + "]";
  }
}
