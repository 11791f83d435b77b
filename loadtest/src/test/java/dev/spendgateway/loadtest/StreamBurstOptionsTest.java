package dev.spendgateway.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The burst's defaults measure what they say: the gateway opening its connections, not ours. */
class StreamBurstOptionsTest {

  private static StreamBurst parse(String... args) {
    CommandLine cl = new CommandLine(new StreamBurst());
    cl.parseArgs(args);
    return cl.getCommand();
  }

  @Test
  void theDefaultClientIsTheLeanOneAndJdkStaysAvailable() {
    assertEquals(StreamBurst.ClientKind.lean, parse("--sim", "http://127.0.0.1:1").client);
    assertEquals(
        StreamBurst.ClientKind.jdk,
        parse("--sim", "http://127.0.0.1:1", "--client", "jdk", "--pool-idle", "0s").client);
  }

  /**
   * The gateway burst must find no idle upstream connection left by the warm-up, or part of it
   * skips the connect a real burst pays: the default wait outlasts every provider's keep-alive.
   */
  @Test
  void thePoolIdleWaitOutlastsEveryProvidersKeepAlive() {
    Path conf = Path.of("..", "conf", "providers.conf");
    assertTrue(Files.exists(conf), "run from the loadtest module: " + conf.toAbsolutePath());
    Config providers = ConfigFactory.parseFile(conf.toFile()).resolve().getConfig("providers");
    Duration wait = parse("--sim", "http://127.0.0.1:1").poolIdle;
    for (String p : List.of("openai", "anthropic")) {
      Duration keepAlive = providers.getDuration(p + ".keep-alive-timeout");
      assertTrue(wait.compareTo(keepAlive) > 0, p + ": " + wait + " <= " + keepAlive);
    }
  }
}
