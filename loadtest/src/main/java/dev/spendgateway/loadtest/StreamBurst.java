package dev.spendgateway.loadtest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/loadtest burst}: how fast streams start. Sends {@code -n} streamed calls at once (each
 * on its own HTTP/1.1 connection, each pausing {@code --pause} after its first content event,
 * scripted into the simulator), first straight to the simulator, then through the gateway once its
 * upstream connections have closed, then through the gateway again at once, and prints the time
 * from send to first content event (p50/p90/p99/max) of the three bursts side by side. The direct
 * burst is what the upstream and this machine allow; the gateway's is what it adds when it must
 * open a connection per call; the pooled one what it adds on connections it already holds.
 */
@Command(
    name = "loadtest burst",
    mixinStandardHelpOptions = true,
    sortOptions = false,
    usageHelpWidth = 110,
    description = {
      "Sends --streams streamed calls at once straight to the simulator (--sim), waits for them to end,",
      "then the same burst through the gateway (after its upstream connections closed: --pool-idle),",
      "then again at once (reusing them), and prints each burst's time to first content event.",
      "Every stream pauses --pause after its first content event (scripted into the simulator), so a",
      "burst holds its connections open as long streams do. Exit 0 when every call of every burst was",
      "served and finished whole; 1 otherwise.",
      ""
    },
    footer = {
      "",
      "Example (simulator on 9100, gateway on 8787):",
      "  bin/loadtest burst --sim http://127.0.0.1:9100 -n 1500 --pause 20s"
    })
public final class StreamBurst implements Callable<Integer> {

  @Option(names = "--host", description = "Gateway host (env GATEWAY_HOST, default 127.0.0.1).")
  String host = env("GATEWAY_HOST", "127.0.0.1");

  @Option(names = "--port", description = "Gateway port (env GATEWAY_PORT, default 8787).")
  int port = Integer.parseInt(env("GATEWAY_PORT", "8787"));

  @Option(names = "--token", description = "Gateway token (env GATEWAY_TOKEN).")
  String token = env("GATEWAY_TOKEN", null);

  @Option(
      names = "--sim",
      required = true,
      paramLabel = "URL",
      description = "The provider simulator behind the gateway, e.g. http://127.0.0.1:9100.")
  URI sim;

  @Option(
      names = {"-n", "--streams"},
      description = "Calls in each burst. Default ${DEFAULT-VALUE}.")
  int streams = 1500;

  @Option(
      names = "--pause",
      converter = LoadTest.DurationConverter.class,
      paramLabel = "TIME",
      description = "Silence after each stream's first content event. Default ${DEFAULT-VALUE}.")
  Duration pause = Duration.ofSeconds(20);

  @Option(
      names = "--warmup",
      description =
          "Calls in an unmeasured burst sent first to each target (JIT, pools), 0 for none. "
              + "Default ${DEFAULT-VALUE}.")
  int warmup = 200;

  @Option(
      names = "--client",
      description =
          "The bench's own HTTP client: lean (one thread, non-blocking sockets, the request as"
              + " bytes) or jdk (java.net.http.HttpClient, four instances, as this bench used"
              + " before). Default ${DEFAULT-VALUE}: on a 2-core box the JDK client's own cost per"
              + " new connection shows up in both figures.")
  ClientKind client = ClientKind.lean;

  /** Which HTTP client sends the bursts. */
  enum ClientKind {
    lean,
    jdk
  }

  @Option(
      names = "--pool-idle",
      converter = LoadTest.DurationConverter.class,
      paramLabel = "TIME",
      description =
          "How long the gateway's upstream connections must have been idle before its burst, so"
              + " that the burst opens new ones as a real burst beyond the pool's steady size does"
              + " (the gateway closes them after providers.*.keep-alive-timeout, 30s by default)."
              + " Default ${DEFAULT-VALUE}; 0 to skip the wait.")
  Duration poolIdle = Duration.ofSeconds(35);

  @Option(names = "--json", description = "Print the summary as one JSON object on stdout.")
  boolean json;

  private final ObjectMapper mapper = new ObjectMapper();
  private final String brand = "burst-" + UUID.randomUUID().toString().substring(0, 8);

  /** {@code args} as given after {@code burst}. */
  public static int run(String[] args) {
    return new CommandLine(new StreamBurst()).execute(args);
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  @Override
  public Integer call() throws Exception {
    if (token == null) {
      System.err.println("loadtest burst: no gateway token: set GATEWAY_TOKEN or pass --token");
      return 2;
    }
    HoldStreams.scriptPause(http11(), sim, false, pause);
    URI direct = sim.resolve("/v1/chat/completions");
    URI gateway = URI.create("http://" + host + ":" + port + "/openai/v1/chat/completions");
    Burst straight;
    Burst through;
    Burst pooled;
    try (Transport transport = transport()) {
      long gatewayIdleSince = System.nanoTime();
      if (warmup > 0) {
        System.err.printf("loadtest burst: warm-up, %d calls to each target%n", warmup);
        new Burst("warm-up gateway", gateway, warmup).run(transport);
        gatewayIdleSince = System.nanoTime();
        new Burst("warm-up direct", direct, warmup).run(transport);
      }
      straight = new Burst("direct", direct, streams).run(transport);
      // Connections the warm-up left in the gateway's pool would serve part of the burst without a
      // connect: a burst past the pool's steady size opens every one of its connections.
      long wait = poolIdle.toNanos() - (System.nanoTime() - gatewayIdleSince);
      if (wait > 0) {
        System.err.printf(
            "loadtest burst: %d s for the gateway's idle upstream connections to close%n",
            TimeUnit.NANOSECONDS.toSeconds(wait) + 1);
        TimeUnit.NANOSECONDS.sleep(wait);
      }
      through = new Burst("gateway", gateway, streams).runSplit(transport);
      // The same burst at once again: the connections the last one left are reused.
      pooled = new Burst("pooled", gateway, streams).runSplit(transport);
    }

    ObjectNode summary = mapper.createObjectNode();
    summary.put("streams", streams);
    summary.put("pauseSec", pause.toMillis() / 1000.0);
    summary.put("warmup", warmup);
    summary.put("client", client.name());
    summary.set("direct", straight.json());
    summary.set("gateway", through.json());
    summary.set("gatewayPooled", pooled.json());
    summary.put("gatewayToDirectP90", ratio(through, straight));
    summary.put("pooledToDirectP90", ratio(pooled, straight));
    boolean ok = straight.ok() && through.ok() && pooled.ok();
    summary.put("ok", ok);
    if (json) {
      System.out.println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(summary));
    } else {
      System.out.printf(
          "burst of %,d streamed calls (HTTP/1.1, pause %s after the first event, %s client),"
              + " first content:%n",
          streams, pause, client);
      System.out.println(straight.line());
      System.out.println(through.line());
      System.out.println(pooled.line());
      System.out.printf(
          "p90 gateway / direct: %.2f with new upstream connections, %.2f pooled%n",
          ratio(through, straight), ratio(pooled, straight));
      System.out.println(
          "(gateway: new upstream connections, as for callers beyond the pool's idle ones;"
              + " pooled: at once again, reusing the connections the gateway burst left;"
              + " split: the gateway's own mean time before the upstream call, and the mean from"
              + " its upstream send to the answer's headers, from its /metrics histograms)");
      System.out.println("RESULT: " + (ok ? "PASS" : "FAIL"));
    }
    return ok ? 0 : 1;
  }

  private static double ratio(Burst burst, Burst direct) {
    double d = direct.firstContent.getValueAtPercentile(90);
    return d <= 0 ? 0 : Math.round(100 * burst.firstContent.getValueAtPercentile(90) / d) / 100.0;
  }

  /**
   * Sum and count of the gateway's {@code gateway_overhead_seconds} (token, policy, durable
   * reserve: before the upstream call) and {@code gateway_upstream_ttfb_seconds} (upstream send to
   * the answer's headers) histograms, all label sets added; empty when /metrics cannot be read.
   */
  private double[] gatewayTimes() {
    try {
      HttpRequest get =
          HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/metrics"))
              .header("authorization", "Bearer " + token)
              .timeout(Duration.ofSeconds(30))
              .build();
      String text = http11().send(get, HttpResponse.BodyHandlers.ofString()).body();
      double[] out = new double[4];
      String[] names = {
        "gateway_overhead_seconds_sum",
        "gateway_overhead_seconds_count",
        "gateway_upstream_ttfb_seconds_sum",
        "gateway_upstream_ttfb_seconds_count"
      };
      for (String line : text.split("\n")) {
        for (int i = 0; i < names.length; i++) {
          if (line.startsWith(names[i] + "{") || line.startsWith(names[i] + " ")) {
            out[i] += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
          }
        }
      }
      return out;
    } catch (IOException | RuntimeException e) {
      return new double[0];
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new double[0];
    }
  }

  /** One burst: {@code count} calls sent at once to {@code target}, each timed to first content. */
  private final class Burst {
    private final String name;
    private final URI target;
    private final int count;
    private final Histogram firstContent = new ConcurrentHistogram(3_600_000_000L, 3);
    private final AtomicInteger whole = new AtomicInteger();
    private final Map<String, AtomicInteger> problems = new ConcurrentHashMap<>();
    private long lastFirstNanos;
    private long startNanos;
    private String split = "";

    Burst(String name, URI target, int count) {
      this.name = name;
      this.target = target;
      this.count = count;
    }

    Burst run(Transport transport) throws InterruptedException {
      CountDownLatch ended = new CountDownLatch(count);
      Map<String, String> headers = headers();
      String body = HoldStreams.body(false, 0);
      startNanos = System.nanoTime();
      for (int i = 0; i < count; i++) {
        Call call = new Call(ended);
        call.sentNanos = System.nanoTime();
        transport.send(target, headers, body, call);
      }
      long deadline = System.nanoTime() + pause.plusMinutes(5).toNanos();
      while (!ended.await(1, TimeUnit.SECONDS) && System.nanoTime() < deadline) {
        System.err.printf(
            "[%s] first content %,d of %,d, whole %,d, problems %s%n",
            name, firstContent.getTotalCount(), count, whole.get(), problems);
      }
      return this;
    }

    /** {@link #run}, with the gateway's own split of the burst's time read around it. */
    Burst runSplit(Transport transport) throws InterruptedException {
      double[] before = gatewayTimes();
      run(transport);
      double[] after = gatewayTimes();
      if (before.length == 4 && after.length == 4) {
        double overheadCount = after[1] - before[1];
        double ttfbCount = after[3] - before[3];
        split =
            String.format(
                " split: before upstream %,.0f ms, upstream to headers %,.0f ms",
                overheadCount <= 0 ? 0 : 1000 * (after[0] - before[0]) / overheadCount,
                ttfbCount <= 0 ? 0 : 1000 * (after[2] - before[2]) / ttfbCount);
      }
      return this;
    }

    private Map<String, String> headers() {
      Map<String, String> h = new LinkedHashMap<>();
      h.put("content-type", "application/json");
      h.put("authorization", "Bearer " + token);
      h.put("x-spend-lane", "app");
      h.put("x-spend-brand", brand);
      h.put("x-spend-brand-daily-usd", "100000");
      h.put("x-spend-brand-monthly-usd", "100000");
      return h;
    }

    boolean ok() {
      return problems.isEmpty() && whole.get() == count;
    }

    ObjectNode json() {
      ObjectNode out = mapper.createObjectNode();
      out.set("firstContentMs", Report.latency(mapper, firstContent));
      out.put("openedPerSec", Math.round(openedPerSec()));
      out.put("finishedWhole", whole.get());
      ObjectNode p = out.putObject("problems");
      new TreeMap<>(problems).forEach((k, v) -> p.put(k, v.get()));
      return out;
    }

    /** Calls served per second: the burst's calls over the time to its last first content. */
    double openedPerSec() {
      double sec = (lastFirstNanos - startNanos) / 1e9;
      return sec <= 0 ? 0 : firstContent.getTotalCount() / sec;
    }

    String line() {
      return String.format(
          "%-8s p50 %,9.1f ms  p90 %,9.1f ms  p99 %,9.1f ms  max %,9.1f ms  (%,d served, %,.0f/s,"
              + " %,d whole, problems %s)%s",
          name,
          firstContent.getValueAtPercentile(50) / 1000.0,
          firstContent.getValueAtPercentile(90) / 1000.0,
          firstContent.getValueAtPercentile(99) / 1000.0,
          firstContent.getMaxValue() / 1000.0,
          firstContent.getTotalCount(),
          openedPerSec(),
          whole.get(),
          new TreeMap<>(problems),
          split);
    }

    private synchronized void firstContentAt(long nanos, long sentNanos) {
      firstContent.recordValue(Math.max(1, (nanos - sentNanos) / 1000));
      lastFirstNanos = Math.max(lastFirstNanos, nanos);
    }

    /** One call, read line by line. */
    private final class Call implements SseBurstClient.Listener {
      private final CountDownLatch ended;
      private final AtomicBoolean done = new AtomicBoolean();
      private long sentNanos;
      private volatile int status;
      private boolean served;
      private boolean sawEnd;

      Call(CountDownLatch ended) {
        this.ended = ended;
      }

      @Override
      public void status(int code) {
        status = code;
      }

      @Override
      public void line(String line) {
        if (status == 200 && !served && HoldStreams.isContent(line)) {
          served = true;
          firstContentAt(System.nanoTime(), sentNanos);
        }
        if (line.equals("data: [DONE]")) {
          sawEnd = true;
        }
      }

      @Override
      public void end(String problem) {
        if (!done.compareAndSet(false, true)) {
          return;
        }
        String verdict;
        if (problem != null) {
          // a refusal's body cut short is still the refusal
          verdict = problem.equals("cut") && status > 0 && status != 200 ? "" + status : problem;
        } else {
          verdict = status != 200 ? Integer.toString(status) : sawEnd ? null : "cut:no_end_marker";
        }
        if (verdict == null) {
          whole.incrementAndGet();
        } else {
          problems.computeIfAbsent(verdict, k -> new AtomicInteger()).incrementAndGet();
        }
        ended.countDown();
      }
    }
  }

  private static HttpClient http11() {
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(60))
        .build();
  }

  private Transport transport() throws IOException {
    return client == ClientKind.lean ? new LeanTransport() : new JdkTransport();
  }

  /** Sends one call of a burst and reports what comes back to its listener. */
  private interface Transport extends AutoCloseable {
    void send(URI target, Map<String, String> headers, String body, SseBurstClient.Listener to);

    @Override
    void close() throws IOException;
  }

  /** The bench's default: {@link SseBurstClient}. */
  private static final class LeanTransport implements Transport {
    private final SseBurstClient client = new SseBurstClient();

    LeanTransport() throws IOException {}

    @Override
    public void send(
        URI target, Map<String, String> headers, String body, SseBurstClient.Listener to) {
      client.send(
          new InetSocketAddress(target.getHost(), target.getPort()),
          SseBurstClient.post(target, headers, body),
          to);
    }

    @Override
    public void close() throws IOException {
      client.close();
    }
  }

  /** The JDK's HttpClient, four instances round robin, kept to compare with what it measured. */
  private final class JdkTransport implements Transport {
    private final List<HttpClient> pool = IntStream.range(0, 4).mapToObj(i -> http11()).toList();
    private final AtomicInteger next = new AtomicInteger();

    @Override
    public void send(
        URI target, Map<String, String> headers, String body, SseBurstClient.Listener to) {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(target)
              .timeout(pause.plus(Duration.ofMinutes(5)))
              .POST(HttpRequest.BodyPublishers.ofString(body));
      headers.forEach(b::header);
      pool.get(Math.floorMod(next.getAndIncrement(), pool.size()))
          .sendAsync(
              b.build(),
              info -> {
                to.status(info.statusCode());
                return HttpResponse.BodySubscribers.fromLineSubscriber(
                    new Flow.Subscriber<String>() {
                      @Override
                      public void onSubscribe(Flow.Subscription s) {
                        s.request(Long.MAX_VALUE);
                      }

                      @Override
                      public void onNext(String line) {
                        to.line(line);
                      }

                      @Override
                      public void onError(Throwable failure) {
                        to.end("cut");
                      }

                      @Override
                      public void onComplete() {
                        to.end(null);
                      }
                    });
              })
          .whenComplete(
              (r, failure) -> {
                if (failure != null) {
                  to.end("error:" + HoldStreams.rootCause(failure).getClass().getSimpleName());
                }
              });
    }

    @Override
    public void close() {}
  }
}
