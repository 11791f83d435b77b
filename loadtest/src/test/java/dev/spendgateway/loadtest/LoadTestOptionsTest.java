package dev.spendgateway.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

class LoadTestOptionsTest {

  private static LoadTest parse(String... args) {
    CommandLine cl = LoadTest.commandLine();
    cl.parseArgs(args);
    return cl.getCommand();
  }

  @Test
  void ledgerDefaultsAreAClosedLoopOfTenSecondsWithAFreshBrandAndSmallCaps() {
    LoadTest t = parse("ledger", "--token", "t");
    assertEquals(LoadTest.ScenarioName.ledger, t.scenario);
    assertEquals(16, t.concurrency);
    Runner.Plan plan = t.plan();
    assertFalse(plan.openLoop());
    assertEquals(Duration.ofSeconds(10), plan.duration());
    assertEquals("lt-" + t.runId, t.effectiveBrand());
    assertEquals(new BigDecimal("5"), t.effectiveBrandDaily());
    assertEquals(LedgerScenario.Close.NONE, t.close);
    assertTrue(t.validate().isEmpty());
  }

  @Test
  void everyOptionIsParsed() {
    LoadTest t =
        parse(
            "openai-chat",
            "--host",
            "10.0.0.1",
            "--port",
            "9000",
            "--token",
            "tok",
            "-c",
            "64",
            "-d",
            "2m",
            "-r",
            "1000",
            "--direct",
            "http://127.0.0.1:5555",
            "--stream",
            "--lane",
            "free",
            "--max-tokens",
            "32",
            "--model",
            "gpt-x",
            "--json",
            "-q",
            "--run-id",
            "abc",
            "--clients",
            "2",
            "--warmup",
            "5s",
            "--timeout",
            "500ms");
    assertEquals(LoadTest.ScenarioName.openai_chat, t.scenario);
    assertEquals("http://10.0.0.1:9000", t.gateway().toString());
    assertEquals(64, t.concurrency);
    assertEquals(Duration.ofMinutes(2), t.duration);
    assertEquals(1000d, t.rate);
    assertTrue(t.stream && t.json && t.quiet);
    assertEquals(Duration.ofSeconds(5), t.warmup);
    assertEquals(Duration.ofMillis(500), t.timeout);
    assertEquals(new BigDecimal("100000"), t.effectiveBrandDaily());
    assertTrue(t.validate().isEmpty());
  }

  @Test
  void inCompareModeRateAndRequestsApplyToEachTarget() {
    Runner.Plan plan =
        parse(
                "anthropic",
                "--token",
                "t",
                "-r",
                "1000",
                "-d",
                "30s",
                "--direct",
                "http://127.0.0.1:1")
            .plan();
    assertTrue(plan.openLoop());
    assertEquals(1000d, plan.ratePerSecond());
    assertEquals(30_000, plan.limit());
  }

  @Test
  void requestsWinOverDuration() {
    Runner.Plan plan = parse("ledger", "--token", "t", "-n", "1000000", "-d", "1s").plan();
    assertEquals(1_000_000, plan.limit());
  }

  @Test
  void ledgerSettleOptions() {
    LoadTest t =
        parse(
            "ledger",
            "--token",
            "t",
            "--settle",
            "settle",
            "--amount-usd",
            "0.000001",
            "--actual-usd",
            "0.0000005",
            "--brand",
            "acme",
            "--brand-daily-usd",
            "0.9",
            "--lane",
            "app");
    assertEquals(LedgerScenario.Close.SETTLE, t.close);
    assertEquals(new BigDecimal("0.000001"), t.amountUsd);
    assertEquals("acme", t.effectiveBrand());
    assertEquals(new BigDecimal("0.9"), t.effectiveBrandDaily());
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "ledger --rate 100,                              --rate needs --duration or --requests",
    "ledger -c 0,                                    --concurrency must be at least 1",
    "ledger --direct http://x:1,                     --direct applies to the provider scenarios",
    "ledger --stream,                                --stream applies to the provider scenarios",
    "ledger --lane paid,                             --lane must be app",
    "ledger --amount-usd 0.0000001,                  --amount-usd must be positive",
  })
  void badCombinationsAreRefusedWithAClearMessage(String args, String message) {
    LoadTest t = parse((args + " --token t").split(" "));
    assertTrue(t.validate().orElseThrow().startsWith(message), t.validate().orElseThrow());
  }

  @Test
  void unknownScenarioAndBadDurationAreUsageErrors() {
    assertThrows(CommandLine.ParameterException.class, () -> parse("chaos"));
    assertThrows(CommandLine.ParameterException.class, () -> parse("ledger", "-d", "soon"));
    assertThrows(CommandLine.ParameterException.class, () -> parse("ledger", "--settle", "maybe"));
    StringWriter err = new StringWriter();
    int code = LoadTest.commandLine().setErr(new PrintWriter(err)).execute("chaos");
    assertEquals(2, code);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "--bogus                 | Unknown option: '--bogus'",
        "--bogus=1               | Unknown option: '--bogus=1'",
        "ledger --bogus          | Unknown option: '--bogus'",
        "-c 4                    | Missing required parameter: 'SCENARIO'",
        "chaos                   | Invalid value for positional parameter",
      })
  void aUsageErrorNamesWhatIsWrong(String args, String message) {
    StringWriter err = new StringWriter();
    int code = LoadTest.commandLine().setErr(new PrintWriter(err)).execute(args.trim().split(" "));
    assertEquals(2, code);
    assertTrue(err.toString().startsWith("loadtest: " + message), err.toString());
  }

  @Test
  void helpDocumentsEveryOption() {
    String help = LoadTest.commandLine().getUsageMessage();
    for (CommandLine.Model.OptionSpec o : LoadTest.commandLine().getCommandSpec().options()) {
      assertTrue(help.contains(o.longestName()), o.longestName());
      assertFalse(o.description().length == 0, o.longestName() + " has no description");
    }
    assertTrue(help.contains("GATEWAY_TOKEN"));
    // The streams scenario has its own command line, and is still listed here with the others.
    assertTrue(help.contains("openai-chat | streams"), help);
    assertTrue(help.contains("bin/loadtest streams --help"), help);
  }

  @Test
  void ledgerBodiesCarryTheRunIdAndExactAmounts() {
    LedgerScenario s =
        new LedgerScenario(
            java.net.URI.create("http://127.0.0.1:1"),
            "t",
            Duration.ofSeconds(1),
            "run1",
            "app",
            "acme",
            new BigDecimal("0.30"),
            new BigDecimal("5"),
            new BigDecimal("50"),
            LedgerScenario.Close.NONE,
            new BigDecimal("0.30"));
    assertEquals(
        "{\"id\":\"run1-7\",\"lane\":\"app\",\"brand\":\"acme\",\"amountUsd\":0.30,\"brandDailyUsd\":5,"
            + "\"brandMonthlyUsd\":50}",
        s.reserveBody(7));
    LedgerScenario free =
        new LedgerScenario(
            java.net.URI.create("http://127.0.0.1:1"),
            "t",
            Duration.ofSeconds(1),
            "run1",
            "free",
            "ignored",
            new BigDecimal("0.01"),
            null,
            null,
            LedgerScenario.Close.VOID,
            null);
    assertEquals("{\"id\":\"run1-0\",\"lane\":\"free\",\"amountUsd\":0.01}", free.reserveBody(0));
    assertNull(parse("ledger").direct);
  }
}
