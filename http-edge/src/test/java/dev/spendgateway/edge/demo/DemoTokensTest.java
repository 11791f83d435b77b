package dev.spendgateway.edge.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's tokens file holds the tokens the running demo accepts: README's recipe reads them from
 * it ({@code sed -n 's/^caller=//p' data/demo/demo-tokens.properties}).
 */
class DemoTokensTest {
  @TempDir Path demoDir;

  private Properties file() throws Exception {
    Properties p = new Properties();
    try (var in = Files.newBufferedReader(demoDir.resolve(DemoTokens.FILE))) {
      p.load(in);
    }
    return p;
  }

  @Test
  void theKeptTokensAreReusedOnEveryStart() throws Exception {
    DemoTokens first = DemoTokens.keptIn(demoDir, "", "");
    DemoTokens again = DemoTokens.keptIn(demoDir, null, null);
    assertEquals(first, again);
    assertNotEquals(first.caller(), first.admin());
    assertEquals(first.caller(), file().getProperty("caller"));
  }

  /** With GATEWAY_TOKEN set, the file kept the old token, and the README's recipe got a 401. */
  @Test
  void anEnvironmentTokenUsedByTheDemoIsWhatTheFileSays() throws Exception {
    DemoTokens kept = DemoTokens.keptIn(demoDir, "", "");

    DemoTokens used = DemoTokens.keptIn(demoDir, "env-caller-token", "");

    assertEquals("env-caller-token", used.caller());
    assertEquals(kept.admin(), used.admin());
    assertEquals("env-caller-token", file().getProperty("caller"));
    assertEquals(kept.admin(), file().getProperty("admin"));
  }
}
