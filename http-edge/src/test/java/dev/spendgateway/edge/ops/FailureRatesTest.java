package dev.spendgateway.edge.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FailureRatesTest {
  @ParameterizedTest(name = "HTTP {0} is a provider failure: {1}")
  @CsvSource({
    "200, false",
    "400, false",
    "401, false",
    "404, false",
    "408, true",
    "410, true",
    "429, true",
    "500, true",
    "503, true",
    "529, true"
  })
  void onlyTheProvidersSideCounts(String status, boolean failure) {
    assertEquals(failure, FailureRates.isProviderFailure(status));
  }

  @Test
  void ratesCoverTheWindowOnly() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AtomicLong now = new AtomicLong();
    FailureRates rates =
        new FailureRates(registry, Duration.ofMinutes(15), Duration.ofSeconds(10), now::get);
    Counter ok = responses(registry, "200");
    Counter down = responses(registry, "503");
    Counter noAnswer =
        Counter.builder("gateway.upstream.failures")
            .tags("provider", "openai", "model", "m", "cause", "connect_failed")
            .register(registry);
    ok.increment(6);
    down.increment(3);
    noAnswer.increment(1);
    assertEquals(
        List.of(new FailureRates.Rate("openai", "m", 10, 4)), rates.rates(), "since start");
    now.addAndGet(Duration.ofMinutes(10).toNanos());
    rates.rates();
    ok.increment(2);
    now.addAndGet(Duration.ofMinutes(10).toNanos());
    // 20 minutes in, the newest sample at or before the window's start (minute 5) is the start.
    assertEquals(List.of(new FailureRates.Rate("openai", "m", 12, 4)), rates.rates());
    now.addAndGet(Duration.ofMinutes(6).toNanos());
    // 26 minutes in, that is the sample of minute 10, which had seen 10 attempts and 4 failures.
    assertEquals(List.of(new FailureRates.Rate("openai", "m", 2, 0)), rates.rates());
  }

  private static Counter responses(SimpleMeterRegistry registry, String status) {
    return Counter.builder("gateway.upstream.responses")
        .tags("provider", "openai", "model", "m", "status", status)
        .register(registry);
  }
}
