package dev.spendgateway.loadtest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code bin/loadtest}: drives a running gateway and checks its books afterwards. */
@Command(
    name = "loadtest",
    mixinStandardHelpOptions = true,
    versionProvider = LoadTest.Version.class,
    sortOptions = false,
    usageHelpWidth = 110,
    description = {
      "Drives a running spend gateway with N concurrent clients, prints progress every second and an",
      "HdrHistogram summary at the end, then reads GET /usage and checks the books: no cap holds more",
      "than its limit (overshoot must be 0) and, for the ledger scenario, exactly floor(headroom/amount)",
      "reservations were accepted. Exit 0 when everything held; 1 on any violation, any 5xx or any call",
      "without an HTTP answer; 2 on bad usage.",
      "",
      "Environment: GATEWAY_HOST (default 127.0.0.1), GATEWAY_PORT (default 8787), GATEWAY_TOKEN;",
      "the options below override them.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  bin/loadtest ledger -c 64 -n 100000 --settle settle",
      "  bin/loadtest anthropic --direct http://127.0.0.1:34567 --rate 1000 -d 30s   # gateway overhead",
      "  bin/loadtest openai-chat --stream -c 64 -d 30s                              # max RPS, TTFB",
      "  bin/loadtest streams --sim http://127.0.0.1:34567 -n 2000 --pause 20s       # open streams"
    })
public final class LoadTest implements Callable<Integer> {

  /** What to drive. */
  enum ScenarioName {
    ledger,
    anthropic,
    openai_chat;

    static ScenarioName parse(String s) {
      return valueOf(s.replace('-', '_').toLowerCase(Locale.ROOT));
    }
  }

  @Parameters(
      index = "0",
      paramLabel = "SCENARIO",
      converter = ScenarioConverter.class,
      description =
          "ledger | anthropic | openai-chat | streams. ledger: POST /ledger/reservations (+ "
              + "settle/void). anthropic / openai-chat: the provider route with spend headers "
              + "(simulator upstream). streams: holds N long streams open at once and has its own "
              + "options (bin/loadtest streams --help).")
  ScenarioName scenario;

  // --- where ---
  @Option(names = "--host", description = "Gateway host (env GATEWAY_HOST, default 127.0.0.1).")
  String host = env("GATEWAY_HOST", "127.0.0.1");

  @Option(names = "--port", description = "Gateway port (env GATEWAY_PORT, default 8787).")
  Integer port;

  @Option(
      names = "--token",
      description =
          "Gateway token (env GATEWAY_TOKEN). Sent as x-api-key "
              + "(ledger, anthropic) or Authorization: Bearer (openai-chat).")
  String token = env("GATEWAY_TOKEN", null);

  @Option(
      names = "--direct",
      paramLabel = "URL",
      description =
          "Compare mode (provider scenarios): also send "
              + "the same request straight to this provider/simulator base URL (e.g. http://127.0.0.1:34567), "
              + "at the same time as through the gateway, and report the latency the gateway adds. Each target "
              + "gets its own --concurrency workers, --rate and --requests.")
  URI direct;

  // --- how much ---
  @Option(
      names = {"-c", "--concurrency"},
      description =
          "Concurrent clients (worker threads, each with one call "
              + "in flight), per target. Default ${DEFAULT-VALUE}.")
  int concurrency = 16;

  @Option(
      names = {"-d", "--duration"},
      converter = DurationConverter.class,
      paramLabel = "TIME",
      description =
          "How long to run, e.g. 30s, 2m, 500ms (plain number = seconds). Default 10s unless "
              + "--requests is given.")
  Duration duration;

  @Option(
      names = {"-n", "--requests"},
      description =
          "How many calls (reservations, or provider calls per " + "target). Wins over --duration.")
  Long requests;

  @Option(
      names = {"-r", "--rate"},
      paramLabel = "RPS",
      description =
          "Open loop: send at this fixed rate per "
              + "target, whatever the answers do; latency is measured from each call's intended send time "
              + "(coordinated-omission correct). Without it: closed loop, each client sends when its last call returns.")
  Double rate;

  @Option(
      names = "--warmup",
      converter = DurationConverter.class,
      paramLabel = "TIME",
      description =
          "Closed-loop "
              + "warm-up before measuring (not counted; runs before the headroom is read). Default 0.")
  Duration warmup = Duration.ZERO;

  @Option(
      names = "--timeout",
      converter = DurationConverter.class,
      paramLabel = "TIME",
      description = "Per-call timeout. Default 30s.")
  Duration timeout = Duration.ofSeconds(30);

  @Option(
      names = "--clients",
      description =
          "java.net.http.HttpClient instances the workers share (HTTP/1.1, "
              + "one connection per in-flight call). Default min(4, concurrency).")
  Integer clients;

  // --- the calls ---
  @Option(
      names = "--lane",
      description = "Spend lane: app | trial | free. Default ${DEFAULT-VALUE}.")
  String lane = "app";

  @Option(
      names = "--brand",
      description =
          "Brand (app) or preview id (trial). Default lt-<run-id>: a fresh "
              + "brand per run, so its caps start empty.")
  String brand;

  @Option(
      names = "--brand-daily-usd",
      description =
          "Brand daily cap sent with each call (app lane). Default 5 "
              + "for ledger, 100000 for provider scenarios.")
  BigDecimal brandDailyUsd;

  @Option(
      names = "--brand-monthly-usd",
      description =
          "Brand monthly cap (app lane). Default 50 for ledger, "
              + "100000 for provider scenarios.")
  BigDecimal brandMonthlyUsd;

  @Option(
      names = "--amount-usd",
      description = "ledger: fixed amount of every reservation. Default ${DEFAULT-VALUE}.")
  BigDecimal amountUsd = new BigDecimal("0.01");

  @Option(
      names = "--settle",
      converter = CloseConverter.class,
      paramLabel = "none|settle|void",
      description = "ledger: what to do with each accepted reservation. Default none (left open).")
  LedgerScenario.Close close = LedgerScenario.Close.NONE;

  @Option(
      names = "--actual-usd",
      description =
          "ledger: actualUsd for --settle settle. Default: the amount "
              + "(then the accepted count is still checked exactly).")
  BigDecimal actualUsd;

  @Option(
      names = "--preview-lifetime-usd",
      description =
          "ledger, trial lane: the preview lifetime cap the "
              + "gateway is configured with, for the accepted-count check. Default ${DEFAULT-VALUE}.")
  BigDecimal previewLifetimeUsd = new BigDecimal("0.60");

  @Option(
      names = "--stream",
      description =
          "Provider scenarios: \"stream\":true (SSE); time to first byte is "
              + "reported next to the full latency.")
  boolean stream;

  @Option(
      names = "--model",
      description = "Provider scenarios: model. Default claude-opus-5-5 / gpt-6.1-sol.")
  String model;

  @Option(
      names = "--max-tokens",
      description = "Provider scenarios: max output tokens. Default ${DEFAULT-VALUE}.")
  int maxTokens = 16;

  // --- output ---
  @Option(
      names = "--run-id",
      description =
          "Prefix of every reservation id (and of the default brand). " + "Default: random.")
  String runId = UUID.randomUUID().toString().substring(0, 8);

  @Option(
      names = "--no-book-check",
      negatable = false,
      description = "Skip reading /usage at the end.")
  boolean noBookCheck;

  @Option(names = "--json", description = "Print the summary as one JSON object on stdout.")
  boolean json;

  @Option(
      names = {"-q", "--quiet"},
      description = "No per-second progress lines (they go to stderr).")
  boolean quiet;

  private final ObjectMapper mapper = new ObjectMapper();

  public static void main(String[] args) {
    if (args.length > 0 && args[0].equals("streams")) {
      System.exit(
          HoldStreams.run(
              java.util.Arrays.copyOfRange(args, 1, args.length))); // hold N streams open
    }
    if (args.length > 0 && args[0].equals("burst")) {
      System.exit(
          StreamBurst.run(
              java.util.Arrays.copyOfRange(args, 1, args.length))); // how fast streams start
    }
    System.exit(commandLine().execute(args));
  }

  /**
   * The command line. Every error is one line on stderr (the stack trace only with {@code
   * --verbose}); a wrong option is one line naming it, exit 2.
   */
  static CommandLine commandLine() {
    LoadTest root = new LoadTest();
    return new CommandLine(root)
        .setCaseInsensitiveEnumValuesAllowed(true)
        .setExecutionExceptionHandler(
            (e, cmd, parsed) -> {
              cmd.getErr().println("loadtest: " + root.explain(e));
              if (root.verbose) {
                e.printStackTrace(cmd.getErr());
              }
              cmd.getErr().flush();
              return 2;
            })
        .setParameterExceptionHandler(
            (e, args) -> {
              e.getCommandLine()
                  .getErr()
                  .println(
                      "loadtest: "
                          + usageProblem(e, args)
                          + " (bin/loadtest --help lists "
                          + "the options)");
              e.getCommandLine().getErr().flush();
              return 2;
            });
  }

  /**
   * The first thing wrong with the command line. An unknown option is named before a missing
   * scenario: with {@code bin/loadtest --bogus} picocli reports only the scenario, and the caller
   * would look for a typo in the wrong place.
   */
  static String usageProblem(CommandLine.ParameterException e, String[] args) {
    if (e instanceof CommandLine.MissingParameterException) {
      for (String arg : args) {
        if (arg.startsWith("-")
            && e.getCommandLine().getCommandSpec().findOption(arg.split("=", 2)[0]) == null) {
          return "Unknown option: '" + arg + "'";
        }
      }
    }
    return firstLine(e.getMessage());
  }

  @Option(names = "--verbose", description = "On an error, print the stack trace too.")
  boolean verbose;

  /** The port: --port, else GATEWAY_PORT, else 8787. */
  int port() {
    if (port != null) {
      return port;
    }
    String fromEnv = env("GATEWAY_PORT", "8787");
    try {
      return Integer.parseInt(fromEnv.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "GATEWAY_PORT is '" + fromEnv + "', not a port number; fix it or pass --port");
    }
  }

  /** One line for what went wrong: the gateway unreachable, or the failure's own message. */
  String explain(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof java.net.ConnectException
          || c instanceof java.net.http.HttpConnectTimeoutException) {
        return "cannot reach the gateway at "
            + gateway()
            + " (is it running? GATEWAY_HOST/GATEWAY_PORT or --host/--port)";
      }
    }
    Throwable t = e;
    while (t.getCause() != null
        && t.getCause() != t
        && (t.getMessage() == null || t instanceof java.util.concurrent.ExecutionException)) {
      t = t.getCause();
    }
    if (t instanceof java.net.ConnectException
        || t instanceof java.net.http.HttpConnectTimeoutException) {
      return "cannot reach the gateway at "
          + gateway()
          + " (is it running? GATEWAY_HOST/GATEWAY_PORT or --host/--port)";
    }
    return firstLine(t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage());
  }

  private static String firstLine(String message) {
    return message.lines().findFirst().orElse(message).strip();
  }

  /** {@code --version}: the jar's version (its manifest). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {
        "loadtest "
            + Optional.ofNullable(LoadTest.class.getPackage().getImplementationVersion())
                .orElse("dev")
      };
    }
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  /** Checks option combinations picocli cannot; returns the problem or empty. */
  Optional<String> validate() {
    if (token == null) {
      return Optional.of("no gateway token: set GATEWAY_TOKEN or pass --token");
    }
    if (concurrency < 1) {
      return Optional.of("--concurrency must be at least 1");
    }
    if (rate != null && !(rate > 0)) {
      return Optional.of("--rate must be positive");
    }
    if (rate != null && requests == null && duration == null) {
      return Optional.of("--rate needs --duration or --requests");
    }
    if (direct != null && scenario == ScenarioName.ledger) {
      return Optional.of(
          "--direct applies to the provider scenarios (anthropic, openai-chat), not ledger");
    }
    if (stream && scenario == ScenarioName.ledger) {
      return Optional.of("--stream applies to the provider scenarios");
    }
    if (!List.of("app", "trial", "free").contains(lane)) {
      return Optional.of("--lane must be app, trial or free");
    }
    if (amountUsd.signum() <= 0 || amountUsd.scale() > 6) {
      return Optional.of("--amount-usd must be positive with at most 6 decimals");
    }
    if (requests != null && requests < 1) {
      return Optional.of("--requests must be at least 1");
    }
    return Optional.empty();
  }

  /**
   * The run's plan, per target (compare mode runs one such plan for the gateway and one for
   * direct).
   */
  Runner.Plan plan() {
    Duration d = duration == null && requests == null ? Duration.ofSeconds(10) : duration;
    return new Runner.Plan(concurrency, d, requests, rate);
  }

  String effectiveBrand() {
    return brand != null ? brand : "lt-" + runId;
  }

  BigDecimal effectiveBrandDaily() {
    return brandDailyUsd != null
        ? brandDailyUsd
        : scenario == ScenarioName.ledger ? new BigDecimal("5") : new BigDecimal("100000");
  }

  BigDecimal effectiveBrandMonthly() {
    return brandMonthlyUsd != null
        ? brandMonthlyUsd
        : scenario == ScenarioName.ledger ? new BigDecimal("50") : new BigDecimal("100000");
  }

  URI gateway() {
    return URI.create("http://" + host + ":" + port());
  }

  Scenario build(String idPrefix) {
    return switch (scenario) {
      case ledger ->
          new LedgerScenario(
              gateway(),
              token,
              timeout,
              idPrefix,
              lane,
              effectiveBrand(),
              amountUsd,
              effectiveBrandDaily(),
              effectiveBrandMonthly(),
              close,
              actualUsd == null ? amountUsd : actualUsd);
      case anthropic, openai_chat ->
          new ProviderScenario(
              scenario == ScenarioName.anthropic
                  ? ProviderScenario.Dialect.ANTHROPIC
                  : ProviderScenario.Dialect.OPENAI_CHAT,
              gateway(),
              direct,
              token,
              timeout,
              model,
              maxTokens,
              stream,
              lane,
              effectiveBrand(),
              effectiveBrandDaily(),
              effectiveBrandMonthly());
    };
  }

  @Override
  public Integer call() throws Exception {
    Optional<String> problem = validate();
    if (problem.isPresent()) {
      System.err.println("loadtest: " + problem.get());
      return 2;
    }
    int n = clients != null ? clients : Math.min(4, concurrency);
    List<HttpClient> pool =
        IntStream.range(0, Math.max(1, n))
            .mapToObj(
                i ->
                    HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(5))
                        .build())
            .toList();
    PrintStream progress = quiet ? null : System.err;

    if (!warmup.isZero()) {
      Scenario w = build(runId + "-w");
      System.err.println("loadtest: warming up for " + warmup.toSeconds() + " s");
      Runner.run(w, new Runner.Plan(concurrency, warmup, null, null), pool, null);
    }

    Optional<List<BookCheck.CapRow>> before = Optional.empty();
    if (!noBookCheck) {
      before = Optional.of(BookCheck.parse(usage(pool.get(0))));
    }
    Scenario s = build(runId);
    Runner.Plan plan = plan();
    System.err.printf(
        "loadtest: %s against %s, run id %s, %s, concurrency %d%n",
        scenario.name().replace('_', '-'),
        gateway(),
        runId,
        plan.openLoop() ? "open loop at " + plan.ratePerSecond() + "/s" : "closed loop",
        concurrency);
    Runner.Outcome outcome = Runner.run(s, plan, pool, progress);

    ObjectNode summary = summarize(s, plan, outcome);
    List<String> violations = new ArrayList<>();
    for (OpStats op : s.ops()) {
      Report.statusViolations(op, expectedStatuses(op.name()), violations);
    }
    if (before.isPresent()) {
      BookCheck.Result book = bookCheck(s, before.get(), pool.get(0), summary);
      violations.addAll(book.violations());
      summary.set("book", Report.book(mapper, book));
    } else {
      summary.put("bookSkipped", "--no-book-check");
    }
    ArrayNode v = summary.putArray("violations");
    violations.forEach(v::add);
    summary.put("ok", violations.isEmpty());
    System.out.print(
        json
            ? mapper.writerWithDefaultPrettyPrinter().writeValueAsString(summary) + "\n"
            : Report.text(summary));
    System.out.flush();
    return violations.isEmpty() ? 0 : 1;
  }

  private List<String> expectedStatuses(String op) {
    return switch (op) {
      case "reserve" -> List.of("201", "402");
      case "settle", "void" -> List.of("200");
      default -> List.of("200", "402");
    };
  }

  private ObjectNode summarize(Scenario s, Runner.Plan plan, Runner.Outcome outcome) {
    ObjectNode summary = mapper.createObjectNode();
    summary.put(
        "scenario",
        scenario.name().replace('_', '-')
            + (stream ? " (stream)" : "")
            + (direct != null ? " vs direct" : ""));
    summary.put("runId", runId);
    summary.put("gateway", gateway().toString());
    summary.put("mode", plan.openLoop() ? "open loop" : "closed loop");
    summary.put("concurrency", concurrency);
    if (plan.openLoop()) {
      summary.put("ratePerSec", plan.ratePerSecond());
    }
    summary.put("calls", outcome.calls());
    summary.put("elapsedSec", Math.round(outcome.seconds() * 100) / 100d);
    summary.put("throughputPerSec", Math.round(outcome.calls() / outcome.seconds()));
    ObjectNode ops = summary.putObject("ops");
    for (OpStats op : s.ops()) {
      ops.set(op.name(), Report.op(mapper, op, outcome.seconds()));
    }
    if (s.ops().size() == 2 && "direct".equals(s.ops().get(1).name())) {
      summary.set("compare", Report.compare(mapper, s.ops().get(0), s.ops().get(1)));
    }
    return summary;
  }

  private BookCheck.Result bookCheck(
      Scenario s, List<BookCheck.CapRow> before, HttpClient client, ObjectNode summary)
      throws IOException, InterruptedException {
    List<BookCheck.CapRow> after = BookCheck.parse(usage(client));
    Optional<Long> expected = Optional.empty();
    long accepted = 0;
    if (s instanceof LedgerScenario ledger) {
      accepted = ledger.reserveStats().count("201") + resolveIndeterminate(ledger, client, summary);
      boolean consumesAmount =
          close == LedgerScenario.Close.NONE
              || (close == LedgerScenario.Close.SETTLE
                  && (actualUsd == null || actualUsd.compareTo(amountUsd) == 0));
      Optional<BigDecimal> headroom =
          BookCheck.headroom(
              before,
              new BookCheck.Lane(
                  lane,
                  effectiveBrand(),
                  effectiveBrandDaily(),
                  effectiveBrandMonthly(),
                  previewLifetimeUsd));
      if (consumesAmount && headroom.isPresent()) {
        summary.put("headroomBeforeUsd", headroom.get());
        expected =
            Optional.of(
                BookCheck.expectedAccepted(
                    headroom.get(), amountUsd, ledger.reserveStats().total()));
      } else {
        summary.put(
            "acceptedCountCheck",
            consumesAmount
                ? "skipped: a cap that applies is not in /usage"
                : "skipped: accepted reservations do not each keep --amount-usd (void, or actual != amount)");
      }
    }
    return BookCheck.check(after, expected, accepted);
  }

  /**
   * A reserve answered 5xx or not at all may still have been booked (e.g. the ledger answered after
   * the gateway's ask timeout). Looks each such id up with {@code GET /ledger/reservations/{id}}
   * and returns how many the ledger did accept, so the exact-count check stays exact.
   */
  private long resolveIndeterminate(LedgerScenario ledger, HttpClient client, ObjectNode summary)
      throws IOException, InterruptedException {
    List<String> ids = ledger.indeterminateIds();
    if (ids.isEmpty()) {
      return 0;
    }
    long held = 0;
    long refused = 0;
    long unknown = 0;
    for (String id : ids) {
      HttpResponse<String> r =
          client.send(
              HttpRequest.newBuilder(gateway().resolve("/ledger/reservations/" + id))
                  .timeout(Duration.ofSeconds(30))
                  .header("x-api-key", token)
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      String status =
          r.statusCode() == 200 ? mapper.readTree(r.body()).path("status").asText() : "";
      switch (status) {
        case "reserved", "settled", "voided", "expired" -> held++;
        case "refused" -> refused++;
        default -> unknown++;
      }
    }
    ObjectNode n = summary.putObject("indeterminateReserves");
    n.put("count", ids.size());
    n.put("heldByLedger", held);
    n.put("refused", refused);
    n.put("notFound", unknown);
    System.err.printf(
        "loadtest: %d reserves got no definite answer; the ledger holds %d of them, refused %d, "
            + "does not know %d%n",
        ids.size(), held, refused, unknown);
    return held;
  }

  private JsonNode usage(HttpClient client) throws IOException, InterruptedException {
    HttpResponse<String> r =
        client.send(
            HttpRequest.newBuilder(gateway().resolve("/usage"))
                .timeout(Duration.ofSeconds(30))
                .header("x-api-key", token)
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() == 401) {
      throw new IOException(
          "the gateway at "
              + gateway()
              + " refused the token (401): set GATEWAY_TOKEN (or --token) "
              + "to the gateway's caller token");
    }
    if (r.statusCode() != 200) {
      throw new IOException("GET /usage answered " + r.statusCode() + ": " + firstLine(r.body()));
    }
    return mapper.readTree(r.body());
  }

  /**
   * Durations like {@code 30s}, {@code 2m}, {@code 500ms}, {@code 1h}, or a plain number of
   * seconds.
   */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      String v = value.trim().toLowerCase(Locale.ROOT);
      Map<String, Long> units = Map.of("ms", 1L, "s", 1000L, "m", 60_000L, "h", 3_600_000L);
      for (String unit : List.of("ms", "s", "m", "h")) {
        if (v.endsWith(unit) && v.length() > unit.length()) {
          String number = v.substring(0, v.length() - unit.length());
          if (number.chars().allMatch(c -> Character.isDigit(c) || c == '.')) {
            return Duration.ofMillis(Math.round(Double.parseDouble(number) * units.get(unit)));
          }
        }
      }
      if (v.matches("\\d+(\\.\\d+)?")) {
        return Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
      }
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a duration (e.g. 30s, 2m, 500ms)");
    }
  }

  static final class ScenarioConverter implements CommandLine.ITypeConverter<ScenarioName> {
    @Override
    public ScenarioName convert(String value) {
      try {
        return ScenarioName.parse(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not a scenario: ledger, anthropic, openai-chat");
      }
    }
  }

  static final class CloseConverter implements CommandLine.ITypeConverter<LedgerScenario.Close> {
    @Override
    public LedgerScenario.Close convert(String value) {
      try {
        return LedgerScenario.Close.valueOf(value.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not one of none, settle, void");
      }
    }
  }
}
