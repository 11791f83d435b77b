package dev.spendgateway.loadtest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/loadtest streams}: holds N long streams open through the gateway at once, each pausing
 * after its first content event (scripted into the simulator), and reports how many were served at
 * once, time to first content, how many finished whole, refusals by kind, the gateway's RSS and
 * heap before and at the peak, and the books afterwards. The question it answers is how many calls
 * one node holds open, not how many it starts per second.
 */
@Command(
    name = "loadtest streams",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpWidth = 110,
    description = {
      "Opens --streams streamed calls through the gateway and keeps them open: with --sim, the simulator",
      "is scripted so every stream pauses --pause after its first content event. Once all are open (or",
      "refused), --probes new calls measure time to first content while the others are held. Reports",
      "served at once, TTFB percentiles, finished whole, refusals by kind, the gateway's RSS and heap",
      "(--gateway-pid) before and at the peak, and the brand's books once every call has ended.",
      "Exit 0 when every stream was served and finished whole and nothing stayed reserved; 1 otherwise.",
      ""
    },
    footer = {
      "",
      "Example (simulator on 9100, gateway pid 4242):",
      "  bin/loadtest streams --sim http://127.0.0.1:9100 --gateway-pid 4242 -n 2000 --pause 20s"
    })
public final class HoldStreams implements Callable<Integer> {

  @Option(names = "--host", description = "Gateway host (env GATEWAY_HOST, default 127.0.0.1).")
  String host = env("GATEWAY_HOST", "127.0.0.1");

  @Option(names = "--port", description = "Gateway port (env GATEWAY_PORT, default 8787).")
  int port = Integer.parseInt(env("GATEWAY_PORT", "8787"));

  @Option(names = "--token", description = "Gateway token (env GATEWAY_TOKEN).")
  String token = env("GATEWAY_TOKEN", null);

  @Option(
      names = {"-n", "--streams"},
      description = "Streams to hold open at once. Default ${DEFAULT-VALUE}.")
  int streams = 1000;

  @Option(
      names = "--pause",
      converter = LoadTest.DurationConverter.class,
      paramLabel = "TIME",
      description =
          "How long each stream stays silent after its first content event (scripted into the "
              + "simulator with --sim). Default ${DEFAULT-VALUE}.")
  Duration pause = Duration.ofSeconds(20);

  @Option(
      names = "--sim",
      paramLabel = "URL",
      description =
          "The provider simulator behind the gateway "
              + "(e.g. http://127.0.0.1:9100): scripted with the pause, its open-stream counts reported. Without it "
              + "the upstream is used as it is.")
  URI sim;

  @Option(
      names = "--hold",
      description =
          "With --sim: every stream stays silent after its first content "
              + "event until all are open (or refused) and the probes are in, then --pause more, then all are "
              + "released together. For a machine too slow to open N streams within one pause.")
  boolean hold;

  @Option(
      names = "--provider",
      description =
          "openai (chat completions) or anthropic (messages). " + "Default ${DEFAULT-VALUE}.")
  String provider = "openai";

  @Option(
      names = "--prompt-bytes",
      description =
          "Pad each call's prompt to about this many "
              + "bytes (to see whether an open stream keeps its request: per-stream heap should not grow "
              + "with it). Default ${DEFAULT-VALUE}.")
  int promptBytes = 0;

  @Option(
      names = "--opening",
      description =
          "Calls waiting for their response headers at once while "
              + "opening (a burst of thousands of connects overflows the listen backlogs). Default ${DEFAULT-VALUE}.")
  int opening = 200;

  @Option(
      names = "--probes",
      description =
          "New calls sent once all streams are open, to time the first "
              + "content of a new call on a loaded node. Default ${DEFAULT-VALUE}.")
  int probes = 100;

  @Option(names = "--probe-rate", description = "Probes per second. Default ${DEFAULT-VALUE}.")
  double probeRate = 20;

  @Option(
      names = "--clients",
      description =
          "java.net.http.HttpClient instances (each has one selector "
              + "thread). Default ${DEFAULT-VALUE}.")
  int clients = 4;

  @Option(
      names = "--h2-port",
      paramLabel = "PORT",
      description =
          "Send the calls over HTTP/2 "
              + "with prior knowledge (h2c) to this port (the gateway's gateway.http2-port), multiplexed "
              + "on --h2-connections connections, as a proxy in front of the gateway would. The books and "
              + "the simulator are still read over HTTP/1.1 on --port.")
  Integer h2Port;

  @Option(
      names = "--h2-connections",
      description =
          "HTTP/2 connections the calls are spread "
              + "over (call i on connection i mod K). Default: one per 500 calls, so none carries more "
              + "than the gateway's max-concurrent-streams (1000).")
  int h2Connections;

  @Option(
      names = "--gateway-pid",
      description =
          "The gateway's process id: its RSS (/proc) and heap "
              + "(jstat; after a forced GC with --live-heap) are sampled before opening and at the peak.")
  Long gatewayPid;

  @Option(
      names = "--live-heap",
      description =
          "Run a full GC in the gateway (jcmd GC.run) before each "
              + "heap sample, so the heap figure is what is live, not what awaits collection.")
  boolean liveHeap;

  @Option(
      names = "--call-usd",
      description =
          "What one call costs at the simulator's usage: the books "
              + "must then show exactly finished x this spent.")
  BigDecimal callUsd;

  @Option(
      names = "--brand",
      description = "Brand. Default hs-<random>: a fresh one, so its books start empty.")
  String brand = "hs-" + UUID.randomUUID().toString().substring(0, 8);

  @Option(names = "--json", description = "Print the summary as one JSON object on stdout.")
  boolean json;

  private final ObjectMapper mapper = new ObjectMapper();
  private final AtomicInteger servedNow = new AtomicInteger();
  private final AtomicInteger servedPeak = new AtomicInteger();
  private final AtomicInteger ended = new AtomicInteger();
  private final AtomicInteger whole = new AtomicInteger();
  private final Map<String, AtomicInteger> refusals = new ConcurrentHashMap<>();
  private final Histogram heldTtfb = new ConcurrentHistogram(3_600_000_000L, 3);
  private final Histogram probeTtfb = new ConcurrentHistogram(3_600_000_000L, 3);
  private final AtomicLong lastFirstContentNanos = new AtomicLong();

  /** {@code args} as given after {@code streams}. */
  public static int run(String[] args) {
    return new CommandLine(new HoldStreams()).execute(args);
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  @Override
  public Integer call() throws Exception {
    if (token == null) {
      System.err.println("loadtest streams: no gateway token: set GATEWAY_TOKEN or pass --token");
      return 2;
    }
    boolean anthropic = provider.equals("anthropic");
    if (!anthropic && !provider.equals("openai")) {
      System.err.println("loadtest streams: --provider must be openai or anthropic");
      return 2;
    }
    if (hold && sim == null) {
      System.err.println("loadtest streams: --hold needs --sim (the simulator holds the streams)");
      return 2;
    }
    List<HttpClient> pool =
        IntStream.range(0, Math.max(1, clients))
            .mapToObj(
                i ->
                    HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(30))
                        .build())
            .toList();
    if (sim != null) {
      script(pool.get(0), anthropic);
    }
    H2Connections h2 = null;
    if (h2Port != null) {
      int k = h2Connections > 0 ? h2Connections : Math.max(1, (streams + probes + 499) / 500);
      h2 = new H2Connections(host, h2Port, k, streams + probes);
    }
    try {
      return run(pool, h2, anthropic);
    } finally {
      if (h2 != null) {
        h2.close();
      }
    }
  }

  private int run(List<HttpClient> pool, H2Connections h2, boolean anthropic) throws Exception {
    ObjectNode summary = mapper.createObjectNode();
    summary.put("streams", streams);
    summary.put("probes", probes);
    summary.put("protocol", h2 == null ? "HTTP/1.1" : "h2c");
    summary.put("pauseSec", pause.toMillis() / 1000.0);
    summary.put("provider", provider);
    summary.put("brand", brand);
    Optional<Sample> before = sample();
    before.ifPresent(s -> summary.set("before", s.json(mapper)));

    // Open all, at most --opening waiting for their headers at a time.
    long start = System.nanoTime();
    Semaphore openingSlots = new Semaphore(opening);
    CountDownLatch allEnded = new CountDownLatch(streams + probes);
    for (int i = 0; i < streams; i++) {
      openingSlots.acquire();
      new Stream(heldTtfb, openingSlots, allEnded).send(pool.get(i % pool.size()), h2, anthropic);
      progress(start, false);
    }
    // At the peak: every stream served or refused (or the pause running out; held streams wait).
    long waitUntil = System.nanoTime() + (hold ? TimeUnit.MINUTES.toNanos(30) : pause.toNanos());
    // Each stream counts once: served and still open, or ended (refusals and cuts end too).
    while (servedNow.get() + ended.get() < streams && System.nanoTime() < waitUntil) {
      Thread.sleep(100);
      progress(start, false);
    }
    double openedSec = (System.nanoTime() - start) / 1e9;
    summary.put("openedInSec", Math.round(openedSec * 10) / 10.0);
    summary.put("servedAtOnce", servedPeak.get());
    Optional<Sample> peak = sample();
    peak.ifPresent(s -> summary.set("atPeak", s.json(mapper)));
    if (before.isPresent() && peak.isPresent() && servedPeak.get() > 0) {
      summary.put(
          "rssGrowthPerStreamKB", (peak.get().rssKb() - before.get().rssKb()) / servedPeak.get());
      summary.put(
          "heapGrowthPerStreamKB",
          (peak.get().heapKb() - before.get().heapKb()) / servedPeak.get());
    }
    if (sim != null) {
      summary.set("simAtPeak", simStreams(pool.get(0)));
    }

    // Probes: new calls while the others are held.
    long probeStart = System.nanoTime();
    for (int i = 0; i < probes; i++) {
      long due = probeStart + (long) (i * 1e9 / probeRate);
      long wait = due - System.nanoTime();
      if (wait > 0) {
        TimeUnit.NANOSECONDS.sleep(wait);
      }
      new Stream(probeTtfb, null, allEnded).send(pool.get(i % pool.size()), h2, anthropic);
    }
    if (hold) {
      // Every probe's first content in (or the probes' own pause over), then the pause, then
      // release.
      long probesIn = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (probeTtfb.getTotalCount() + refusedCount() < probes && System.nanoTime() < probesIn) {
        Thread.sleep(100);
      }
      summary.put("servedAtOnceWithProbes", servedPeak.get());
      Thread.sleep(pause.toMillis());
      awaitAllOpenHeld(pool.get(0));
      post(pool.get(0), sim.resolve("/_sim/release"), "");
    }
    summary.put("servedAtOnceWithProbes", servedPeak.get());

    // Everything ends after its pause (held streams: they were released above); then the books.
    long endBase = System.nanoTime();
    Duration endWait =
        (hold ? Duration.ZERO : pause).plus(Duration.ofSeconds(300 + (long) (probes / probeRate)));
    while (!allEnded.await(1, TimeUnit.SECONDS)) {
      progress(start, true);
      if (System.nanoTime() - endBase > endWait.toNanos()) {
        break;
      }
    }
    summary.put("ended", ended.get());
    summary.put("finishedWhole", whole.get());
    summary.put("stillOpen", streams + probes - ended.get());
    ObjectNode refused = summary.putObject("refusals");
    new TreeMap<>(refusals).forEach((k, v) -> refused.put(k, v.get()));
    summary.set("ttfbMsHeld", Report.latency(mapper, heldTtfb));
    summary.set("ttfbMsProbes", Report.latency(mapper, probeTtfb));
    if (sim != null) {
      summary.set("simAtEnd", simStreams(pool.get(0)));
    }
    boolean booksOk = books(pool.get(0), summary);
    boolean ok = booksOk && refusals.isEmpty() && whole.get() == streams + probes;
    summary.put("ok", ok);
    System.out.println(
        json ? mapper.writerWithDefaultPrettyPrinter().writeValueAsString(summary) : text(summary));
    return ok ? 0 : 1;
  }

  private int refusedCount() {
    return refusals.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  private long lastProgress;

  private void progress(long start, boolean force) {
    long now = System.nanoTime();
    if (now - lastProgress < 1_000_000_000L) {
      return;
    }
    lastProgress = now;
    System.err.printf(
        "[%4ds] served now %,d (peak %,d), ended %,d, whole %,d, refused %s%n",
        (now - start) / 1_000_000_000L,
        servedNow.get(),
        servedPeak.get(),
        ended.get(),
        whole.get(),
        refusals);
  }

  // --- one stream --------------------------------------------------------------------------------

  /**
   * One call read line by line: served when its first content event arrives, whole when the
   * provider's end marker does ({@code data: [DONE]}, {@code event: message_stop}).
   */
  private final class Stream implements Flow.Subscriber<String> {
    private final Histogram ttfb;
    private final Semaphore opening;
    private final CountDownLatch allEnded;
    private long sentNanos;
    private volatile int status;
    private boolean served;
    private boolean sawEnd;
    private final StringBuilder errorBody = new StringBuilder();
    private Flow.Subscription subscription;
    private final java.util.concurrent.atomic.AtomicBoolean done =
        new java.util.concurrent.atomic.AtomicBoolean();

    Stream(Histogram ttfb, Semaphore opening, CountDownLatch allEnded) {
      this.ttfb = ttfb;
      this.opening = opening;
      this.allEnded = allEnded;
    }

    /** Over HTTP/1.1 with {@code client}, or over HTTP/2 on {@code h2} when there is one. */
    void send(HttpClient client, H2Connections h2, boolean anthropic) {
      if (h2 != null) {
        sendH2(h2, anthropic);
        return;
      }
      sentNanos = System.nanoTime();
      client
          .sendAsync(
              request(anthropic),
              info -> {
                status = info.statusCode();
                headersIn();
                return HttpResponse.BodySubscribers.fromLineSubscriber(this);
              })
          .whenComplete(
              (r, failure) -> {
                if (failure != null) {
                  headersIn();
                  end("error:" + rootCause(failure).getClass().getSimpleName());
                }
              });
    }

    private void sendH2(H2Connections h2, boolean anthropic) {
      sentNanos = System.nanoTime();
      h2.post(path(anthropic), headers(anthropic), body(anthropic))
          .whenComplete(
              (response, failure) -> {
                if (failure != null) {
                  headersIn();
                  end("error:" + rootCause(failure).getClass().getSimpleName());
                  return;
                }
                status = response.status().intValue();
                headersIn();
                h2.lines(response, this::onNext)
                    .whenComplete(
                        (done, cut) -> {
                          if (cut != null) {
                            onError(cut);
                          } else {
                            onComplete();
                          }
                        });
              });
    }

    private void headersIn() {
      if (opening != null) {
        opening.release();
      }
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      subscription = s;
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(String line) {
      if (status != 200) {
        if (errorBody.length() < 4096) {
          errorBody.append(line);
        }
        return;
      }
      if (!served && isContent(line)) {
        served = true;
        long now = System.nanoTime();
        ttfb.recordValue(Math.max(1, (now - sentNanos) / 1000));
        lastFirstContentNanos.set(now);
        servedPeak.accumulateAndGet(servedNow.incrementAndGet(), Math::max);
      }
      if (line.equals("data: [DONE]") || line.equals("event: message_stop")) {
        sawEnd = true;
      }
    }

    @Override
    public void onError(Throwable failure) {
      end(status == 200 ? "cut:" + rootCause(failure).getClass().getSimpleName() : refusalKind());
    }

    @Override
    public void onComplete() {
      end(status == 200 ? (sawEnd ? null : "cut:no_end_marker") : refusalKind());
    }

    private void end(String problem) {
      if (!done.compareAndSet(false, true)) {
        return;
      }
      if (served) {
        servedNow.decrementAndGet();
      }
      if (problem == null) {
        whole.incrementAndGet();
      } else if (status != 200) {
        refusals.computeIfAbsent(problem, k -> new AtomicInteger()).incrementAndGet();
      } else {
        refusals.computeIfAbsent(problem, k -> new AtomicInteger()).incrementAndGet();
      }
      ended.incrementAndGet();
      allEnded.countDown();
    }

    /** {@code 503:upstream_busy}: the status and the gateway's or provider's error code or type. */
    private String refusalKind() {
      String kind = "";
      try {
        JsonNode e = mapper.readTree(errorBody.toString()).path("error");
        kind = e.path("code").isTextual() ? e.path("code").asText() : e.path("type").asText();
        String message = e.path("message").asText();
        int open = message.indexOf("capacity (");
        if (open >= 0) {
          kind = message.substring(open + 10, message.indexOf(')', open));
        }
      } catch (IOException | RuntimeException ignored) {
        // not JSON: the status alone
      }
      return status + (kind.isEmpty() ? "" : ":" + kind);
    }
  }

  static boolean isContent(String line) {
    return (line.startsWith("data: {") && line.contains("\"content\":\""))
        || line.equals("event: content_block_delta");
  }

  static Throwable rootCause(Throwable t) {
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }

  // --- requests, the simulator, the books
  // ---------------------------------------------------------

  private URI gateway() {
    return URI.create("http://" + host + ":" + port);
  }

  private static String path(boolean anthropic) {
    return anthropic ? "/anthropic/v1/messages" : "/openai/v1/chat/completions";
  }

  private String body(boolean anthropic) {
    return body(anthropic, promptBytes);
  }

  /** A streamed call's body, its prompt padded to about {@code promptBytes}. */
  static String body(boolean anthropic, int promptBytes) {
    String prompt = "Write a long answer." + " pad".repeat(Math.max(0, promptBytes / 4));
    return anthropic
        ? "{\"model\":\"claude-opus-5-5\",\"max_tokens\":64,\"stream\":true,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\""
            + prompt
            + "\"}]}"
        : "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":64,\"stream\":true,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\""
            + prompt
            + "\"}]}";
  }

  /** The call's headers (but content-type, which each transport sets with the body). */
  private Map<String, String> headers(boolean anthropic) {
    Map<String, String> h = new java.util.LinkedHashMap<>();
    h.put("x-spend-lane", "app");
    h.put("x-spend-brand", brand);
    h.put("x-spend-brand-daily-usd", "100000");
    h.put("x-spend-brand-monthly-usd", "100000");
    if (anthropic) {
      h.put("x-api-key", token);
      h.put("anthropic-version", "2023-06-01");
    } else {
      h.put("authorization", "Bearer " + token);
    }
    return h;
  }

  private HttpRequest request(boolean anthropic) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(gateway().resolve(path(anthropic)))
            .timeout(pause.plus(Duration.ofMinutes(5)))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body(anthropic)));
    headers(anthropic).forEach(b::header);
    return b.build();
  }

  /**
   * Every call on the route pauses after its first content event (4 events in for Anthropic, 2 for
   * chat).
   */
  private void script(HttpClient client, boolean anthropic)
      throws IOException, InterruptedException {
    if (hold) {
      int after = anthropic ? 4 : 2;
      post(
          client,
          sim.resolve("/_sim/script"),
          "{\"route\":\""
              + (anthropic ? "anthropic.messages" : "openai.chat")
              + "\",\"fault\":{\"kind\":\"streamHold\",\"afterEvents\":"
              + after
              + ",\"maxHoldMs\":3600000,\"forever\":true}}");
    } else {
      scriptPause(client, sim, anthropic, pause);
    }
  }

  /**
   * Every call on the route pauses {@code pause} after its first content event (4 events in for
   * Anthropic, 2 for chat).
   */
  static void scriptPause(HttpClient client, URI sim, boolean anthropic, Duration pause)
      throws IOException, InterruptedException {
    String route = anthropic ? "anthropic.messages" : "openai.chat";
    int after = anthropic ? 4 : 2;
    String fault =
        "{\"kind\":\"streamPause\",\"afterEvents\":"
            + after
            + ",\"pauseMs\":"
            + pause.toMillis()
            + ",\"forever\":true}";
    post(
        client,
        sim.resolve("/_sim/script"),
        "{\"route\":\"" + route + "\",\"fault\":" + fault + "}");
  }

  /**
   * Until every stream the simulator has open waits at its hold (at most 30 s): one counted open
   * but not yet at its hold would miss the release and stay silent for the hold's whole maximum.
   */
  private void awaitAllOpenHeld(HttpClient client) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    JsonNode s = simStreams(client);
    while (s.path("held").asInt() < s.path("open").asInt() && System.nanoTime() < deadline) {
      Thread.sleep(100);
      s = simStreams(client);
    }
  }

  private JsonNode simStreams(HttpClient client) throws IOException, InterruptedException {
    HttpResponse<String> r =
        client.send(
            HttpRequest.newBuilder(sim.resolve("/_sim/streams")).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    return mapper.readTree(r.body());
  }

  private static void post(HttpClient client, URI uri, String body)
      throws IOException, InterruptedException {
    HttpResponse<String> r =
        client.send(
            HttpRequest.newBuilder(uri)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException("simulator answered " + r.statusCode() + ": " + r.body());
    }
  }

  /**
   * The brand's books once every call has ended: nothing may stay reserved, and with --call-usd the
   * spend must be exactly the finished calls' cost.
   */
  private boolean books(HttpClient client, ObjectNode summary)
      throws IOException, InterruptedException {
    JsonNode usage = null;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    JsonNode daily = null;
    while (System.nanoTime() < deadline) {
      HttpResponse<String> r =
          client.send(
              HttpRequest.newBuilder(gateway().resolve("/usage?brand=" + brand))
                  .header("x-api-key", token)
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      usage = mapper.readTree(r.body());
      daily = null;
      for (JsonNode row : usage.path("caps")) {
        if (row.path("cap").asText().equals("brand_daily")) {
          daily = row;
        }
      }
      if (daily != null && daily.path("reservedUsd").decimalValue().signum() == 0) {
        break;
      }
      Thread.sleep(500);
    }
    ObjectNode books = summary.putObject("books");
    if (daily == null) {
      books.put("problem", "no brand_daily row in /usage");
      return false;
    }
    BigDecimal spent = daily.path("spentUsd").decimalValue();
    BigDecimal reserved = daily.path("reservedUsd").decimalValue();
    books.put("spentUsd", spent.toPlainString());
    books.put("reservedUsd", reserved.toPlainString());
    books.put("openReservations", usage.path("openReservations").asInt());
    boolean ok = reserved.signum() == 0;
    if (callUsd != null) {
      BigDecimal expected = callUsd.multiply(BigDecimal.valueOf(whole.get()));
      books.put("expectedSpentUsd", expected.toPlainString());
      ok &= expected.compareTo(spent) == 0;
    }
    books.put("exact", ok);
    return ok;
  }

  // --- the gateway process
  // -------------------------------------------------------------------------

  /** RSS from /proc, heap used from jstat (KB). */
  record Sample(long rssKb, long heapKb, int fds) {
    ObjectNode json(ObjectMapper mapper) {
      return mapper
          .createObjectNode()
          .put("rssMB", rssKb / 1024)
          .put("heapUsedMB", heapKb / 1024)
          .put("openFds", fds);
    }
  }

  private Optional<Sample> sample() {
    if (gatewayPid == null) {
      return Optional.empty();
    }
    try {
      if (liveHeap) {
        exec("jcmd", Long.toString(gatewayPid), "GC.run");
      }
      long rss = 0;
      for (String line : Files.readAllLines(Path.of("/proc/" + gatewayPid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
      String[] jstat = exec("jstat", "-gc", Long.toString(gatewayPid)).strip().split("\n");
      String[] names = jstat[0].trim().split("\\s+");
      String[] values = jstat[1].trim().split("\\s+");
      double heap = 0;
      for (int i = 0; i < names.length; i++) {
        if (List.of("S0U", "S1U", "EU", "OU").contains(names[i])) {
          heap += Double.parseDouble(values[i]);
        }
      }
      int fds;
      try (var list = Files.list(Path.of("/proc/" + gatewayPid + "/fd"))) {
        fds = (int) list.count();
      }
      return Optional.of(new Sample(rss, (long) heap, fds));
    } catch (IOException | InterruptedException | RuntimeException e) {
      System.err.println("loadtest streams: could not sample the gateway (" + e + ")");
      return Optional.empty();
    }
  }

  private static String exec(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor(60, TimeUnit.SECONDS);
    return out;
  }

  private String text(ObjectNode summary) throws IOException {
    List<String> lines = new ArrayList<>();
    summary
        .fields()
        .forEachRemaining(e -> lines.add(String.format("%-26s %s", e.getKey(), e.getValue())));
    return String.join("\n", lines)
        + "\nRESULT: "
        + (summary.path("ok").asBoolean() ? "PASS" : "FAIL");
  }
}
