package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.LedgerProtocol.GetUsage;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.upstream.client.ProviderSettings;
import dev.spendgateway.upstream.client.UpstreamSettings;
import dev.spendgateway.upstream.stream.StreamMeter;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every value the code falls back on when a key is absent (a partial config, as a test of one
 * module builds) equals the value the shipped conf/ gives that key, so a start never runs with a
 * number the operator cannot see in conf/. Change a default in conf/ and this test names the
 * constant to change.
 */
class ConfDefaultsTest {
  private static final Config SHIPPED = GatewayMain.load(Map.of(), Map.of());

  @Test
  void theLedgersFallbacksAreTheShippedValues() {
    assertEquals(
        SHIPPED.getDuration("ledger.idempotency-window"),
        LedgerSettings.DEFAULT_IDEMPOTENCY_WINDOW,
        "LedgerSettings.DEFAULT_IDEMPOTENCY_WINDOW");
    assertEquals(
        SHIPPED.getDuration("ledger.idempotency-horizon"),
        LedgerSettings.DEFAULT_IDEMPOTENCY_HORIZON,
        "LedgerSettings.DEFAULT_IDEMPOTENCY_HORIZON");
    assertEquals(
        SHIPPED.getInt("ledger.max-settle-multiple"),
        LedgerSettings.DEFAULT_MAX_SETTLE_MULTIPLE,
        "LedgerSettings.DEFAULT_MAX_SETTLE_MULTIPLE");
    assertEquals(
        SHIPPED.getInt("ledger.max-queued-commands"),
        LedgerSettings.DEFAULT_MAX_QUEUED_COMMANDS,
        "LedgerSettings.DEFAULT_MAX_QUEUED_COMMANDS");
    assertEquals(
        SHIPPED.getInt("gateway.usage-top-subjects"),
        GetUsage.DEFAULT_TOP_SUBJECTS,
        "GetUsage.DEFAULT_TOP_SUBJECTS");
  }

  @Test
  void theUpstreamFallbacksAreTheShippedValues() {
    assertEquals(
        SHIPPED.getDuration("providers.max-call-duration"),
        UpstreamSettings.DEFAULT_MAX_CALL_DURATION,
        "UpstreamSettings.DEFAULT_MAX_CALL_DURATION");
    assertEquals(
        SHIPPED.getDuration("providers.client-subscribe-timeout"),
        StreamMeter.DEFAULT_CLIENT_SUBSCRIBE_TIMEOUT,
        "StreamMeter.DEFAULT_CLIENT_SUBSCRIBE_TIMEOUT");
    assertEquals(
        SHIPPED.getString("providers.anthropic.default-version"),
        ProviderSettings.DEFAULT_ANTHROPIC_VERSION,
        "ProviderSettings.DEFAULT_ANTHROPIC_VERSION");
    for (String provider : new String[] {"openai", "anthropic"}) {
      assertEquals(
          SHIPPED.getDuration("providers." + provider + ".keep-alive-timeout"),
          ProviderSettings.DEFAULT_KEEP_ALIVE_TIMEOUT,
          "ProviderSettings.DEFAULT_KEEP_ALIVE_TIMEOUT vs " + provider);
    }
  }
}
