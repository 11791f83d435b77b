package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.GatewayProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shell examples of docs/OPERATIONS.md and docs/ROUTER.md that run against a gateway, pasted as
 * an operator pastes them, like {@link ReadmeExamplesIT} for the README: against a demo gateway
 * started in the same working directory (only the port differs), in order, by bash. The operator's
 * examples need the demo's admin token ({@code export GATEWAY_ADMIN_TOKEN=...} becomes the demo's)
 * and spend to give back (brand b1 spends $8 today first); their dates are computed from today by
 * the examples themselves, so they work on any day. Every command must succeed.
 */
class DocsExamplesIT {
  @TempDir Path workDir;

  @Test
  void theOperationsAndRouterExamplesRunAgainstADemoGateway() throws Exception {
    Path root = GatewayProcess.root();
    String operations = Files.readString(root.resolve("docs/OPERATIONS.md"));
    String router = Files.readString(root.resolve("docs/ROUTER.md"));
    List<String> blocks = new ArrayList<>();
    blocks.addAll(shBlocks(ReadmeExamplesIT.section(operations, "## Status and circuits")));
    blocks.addAll(shBlocks(ReadmeExamplesIT.section(operations, "## Verify: did every cap hold?")));
    // The first block of the section: the credit and adjust examples.
    blocks.add(
        shBlocks(ReadmeExamplesIT.section(operations, "## Credit a brand, adjust spend")).get(0));
    blocks.addAll(ReadmeExamplesIT.bashBlocks(router));
    assertTrue(blocks.size() >= 4, "the docs have their examples: " + blocks.size());

    String tokens = "data/demo/demo-tokens.properties";
    String printed =
        ReadmeExamplesIT.onDemo(
            workDir,
            port ->
                "export GATEWAY_PORT="
                    + port
                    + " GATEWAY_DATA_DIR=\"$PWD/data/demo\"\n"
                    + "export GATEWAY_TOKEN=$(sed -n 's/^caller=//p' "
                    + tokens
                    + ")\n"
                    // The status section's verbs take the admin token the credit section exports.
                    + "export GATEWAY_ADMIN_TOKEN=$(sed -n 's/^admin=//p' "
                    + tokens
                    + ")\n"
                    // Spend for the credits to give back: $8 for brand b1 today.
                    + "curl -s localhost:"
                    + port
                    + "/ledger/reservations -H \"x-api-key: $GATEWAY_TOKEN\""
                    + " -H 'content-type: application/json' -d '{\"id\":\"docs-1\",\"lane\":\"app\","
                    + "\"brand\":\"b1\",\"amountUsd\":8,\"brandDailyUsd\":20,\"brandMonthlyUsd\":100}'\n"
                    + "curl -s localhost:"
                    + port
                    + "/ledger/reservations/docs-1/settle -H \"x-api-key: $GATEWAY_TOKEN\""
                    + " -H 'content-type: application/json' -d '{\"actualUsd\":8}'\n"
                    + String.join("\n", blocks)
                        .replace(
                            "export GATEWAY_ADMIN_TOKEN=...",
                            "export GATEWAY_ADMIN_TOKEN=$(sed -n 's/^admin=//p' " + tokens + ")")
                        .replace("bin/gateway-admin ", root.resolve("bin/gateway-admin") + " ")
                        .replace("127.0.0.1:8787", "127.0.0.1:" + port)
                        .replace("localhost:8787", "localhost:" + port));
    assertTrue(printed.contains("\"wasOpen\":false"), "reset-circuit answered: " + printed);
    assertTrue(printed.contains("events verified"), "verify passed: " + printed);
    assertTrue(printed.contains("\"scope\":\"grant\""), "the grant was applied: " + printed);
    assertTrue(printed.contains("chat.completion"), "the router answered: " + printed);
    assertFalse(printed.contains("HTTP 4"), printed);
  }

  /** The {@code sh} and {@code bash} fenced blocks of {@code markdown}, in order. */
  private static List<String> shBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    Matcher m = Pattern.compile("(?s)```(?:sh|bash)\\n(.*?)```").matcher(markdown);
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }
}
