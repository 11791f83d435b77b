package dev.spendgateway.edge;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * The edge's own settings ({@code gateway.*} in conf/http.conf).
 *
 * @param host interface to bind
 * @param port TCP port to bind (0 picks a free one, used by tests)
 * @param token the gateway token callers present; empty means "not configured"
 * @param shutdownDrain how long SIGTERM waits for in-flight calls
 * @param readinessTimeout how long /readyz waits on the ledger before answering 503
 */
public record GatewaySettings(
    String host, int port, String token, Duration shutdownDrain, Duration readinessTimeout) {

  public static GatewaySettings fromConfig(Config config) {
    Config c = config.getConfig("gateway");
    return new GatewaySettings(
        c.getString("host"),
        c.getInt("port"),
        c.getString("token"),
        c.getDuration("shutdown-drain"),
        c.getDuration("readiness-timeout"));
  }

  public boolean hasToken() {
    return !token.isBlank();
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

  /** Never print the token: records' generated toString would. */
  @Override
  public String toString() {
    return "GatewaySettings[host=" + host + ", port=" + port + ", token=<redacted>]";
  }
}
