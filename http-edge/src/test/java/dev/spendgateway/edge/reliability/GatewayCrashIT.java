package dev.spendgateway.edge.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.testkit.GatewayProcess;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash test through the whole gateway process: the packaged gateway.jar runs as its own JVM,
 * several threads drive ledger reservations, settles and voids over HTTP, the process is killed
 * with SIGKILL ({@link Process#destroyForcibly()} on Linux) at a seeded random moment, and
 * restarted on the same data dir. Then: every acknowledged reservation and close is there with the
 * right status and amounts; an id never sent is unknown; an id whose request got no answer is
 * either absent or present exactly as sent; and {@code /usage} equals the sum of that history.
 *
 * <p>Trials are chained to keep CI short: the restart that checks trial n is the process trial n+1
 * drives and kills (each trial has its own brand; the global checks cover all trials so far). CI
 * runs 3 seeded trials; {@code -Dcrash.trials=N} runs more, {@code -Dcrash.seed=S} replays one run.
 */
class GatewayCrashIT {
  private static final String TOKEN = "crash-it-token-Hq3v";
  private static final int WORKERS = 4;
  private static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  /** A wrong answer seen by a driver thread (which cannot fail the test itself). */
  private static final java.util.Queue<String> WRONG_ANSWERS =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(2))
          .version(HttpClient.Version.HTTP_1_1)
          .build();

  @TempDir Path work;

  /** What the test sent for one reservation id, and what it was told. */
  static final class Sent {
    final String id;
    final String brand;
    final BigDecimal amount;
    volatile Answer reserve = Answer.NOT_SENT;
    volatile String close; // "settle" or "void", once sent
    volatile BigDecimal actual; // the settle's actualUsd (0 for a void)
    volatile Answer closeAnswer = Answer.NOT_SENT;

    Sent(String id, String brand, BigDecimal amount) {
      this.id = id;
      this.brand = brand;
      this.amount = amount;
    }
  }

  enum Answer {
    NOT_SENT,
    ACKNOWLEDGED,
    NO_ANSWER
  }

  /** One seed per run ({@code -Dcrash.seed=S} replays one), named in any failure. */
  private static final long SEED = Long.getLong("crash.seed", System.nanoTime());

  @RegisterExtension
  static final TestExecutionExceptionHandler NAME_THE_SEED =
      (context, failure) -> {
        throw new AssertionError(
            failure.getMessage() + " [seed " + SEED + ": replay with -Dcrash.seed=" + SEED + "]",
            failure);
      };

  @Test
  void everyAcknowledgedDecisionSurvivesAKill9() throws Exception {
    int trials = Integer.getInteger("crash.trials", 3);
    long seed = SEED;
    System.out.println(
        "GatewayCrashIT: "
            + trials
            + " trials, seed "
            + seed
            + " (replay with -Dcrash.seed="
            + seed
            + ")");
    Random random = new Random(seed);
    Path dataDir = work.resolve("data");
    Map<String, Sent> history = new ConcurrentHashMap<>();
    List<String> brands = new ArrayList<>();

    Gateway gateway = Gateway.start(work, dataDir, 0);
    try {
      for (int trial = 1; trial <= trials; trial++) {
        String brand = "crash-b" + trial + "-" + Long.toHexString(seed & 0xffffff);
        brands.add(brand);
        long killAfterMillis =
            300 + random.nextInt(1700); // after the trial's first acknowledgement
        int sent = drive(gateway, brand, trial, random.nextLong(), killAfterMillis, history);
        gateway.kill9();
        gateway = Gateway.start(work, dataDir, trial);
        Verdict verdict = verify(gateway, history, brands);
        System.out.printf(
            "GatewayCrashIT trial %d: killed after %d ms, %d requests sent, %s%n",
            trial, killAfterMillis, sent, verdict);
        assertTrue(verdict.acknowledged() > 0, "the trial acknowledged something before the kill");
      }
    } finally {
      gateway.kill9();
    }
  }

  // --- driving ----------------------------------------------------------------------------------

  /**
   * Runs WORKERS closed-loop clients until the process is killed; returns how many requests went
   * out.
   */
  private int drive(
      Gateway gateway,
      String brand,
      int trial,
      long seed,
      long killAfterMillis,
      Map<String, Sent> history)
      throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(WORKERS);
    CountDownLatch firstAcknowledged = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicInteger requests =
        new java.util.concurrent.atomic.AtomicInteger();
    for (int w = 0; w < WORKERS; w++) {
      Random random = new Random(seed + w);
      String prefix = "t" + trial + "-w" + w + "-";
      Thread t =
          new Thread(
              () -> {
                try {
                  for (int n = 0; !stop.get(); n++) {
                    BigDecimal amount =
                        BigDecimal.valueOf(100 + random.nextInt(1900), 6); // $0.0001-0.002
                    Sent s = new Sent(prefix + n, brand, amount);
                    history.put(s.id, s);
                    requests.incrementAndGet();
                    s.reserve = post(gateway, "/ledger/reservations", reserveBody(s), 201);
                    if (s.reserve != Answer.ACKNOWLEDGED) {
                      return; // the process is gone
                    }
                    firstAcknowledged.countDown();
                    int choice = random.nextInt(3); // settle, void, or leave open
                    if (choice == 2) {
                      continue;
                    }
                    s.close = choice == 0 ? "settle" : "void";
                    s.actual =
                        choice == 0
                            ? BigDecimal.valueOf(
                                random.nextInt(amount.unscaledValue().intValue() + 1), 6)
                            : BigDecimal.ZERO;
                    requests.incrementAndGet();
                    String body =
                        choice == 0 ? "{\"actualUsd\":" + s.actual.toPlainString() + "}" : "";
                    s.closeAnswer =
                        post(gateway, "/ledger/reservations/" + s.id + "/" + s.close, body, 200);
                    if (s.closeAnswer != Answer.ACKNOWLEDGED) {
                      return;
                    }
                  }
                } finally {
                  done.countDown();
                }
              },
              "crash-driver-" + w);
      t.start();
    }
    // The random moment counts from the first acknowledged reservation: a fresh JVM on a busy CI
    // machine can take longer than the whole window to answer its first request.
    assertTrue(
        firstAcknowledged.await(60, TimeUnit.SECONDS), "the gateway acknowledges a reservation");
    Thread.sleep(killAfterMillis); // the seeded moment of the kill: the test's own pace
    gateway.kill9();
    stop.set(true);
    assertTrue(done.await(30, TimeUnit.SECONDS), "the drivers notice the kill");
    assertTrue(
        WRONG_ANSWERS.isEmpty(), "answers other than 201/200 before the kill: " + WRONG_ANSWERS);
    return requests.get();
  }

  private static String reserveBody(Sent s) {
    return "{\"id\":\""
        + s.id
        + "\",\"lane\":\"app\",\"brand\":\""
        + s.brand
        + "\",\"amountUsd\":"
        + s.amount.toPlainString()
        + ",\"brandDailyUsd\":1000,\"brandMonthlyUsd\":10000}";
  }

  /**
   * ACKNOWLEDGED on the expected status; NO_ANSWER when the connection failed; any other status
   * fails the test.
   */
  private static Answer post(Gateway gateway, String path, String body, int expected) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(gateway.base + path))
            .timeout(
                Duration.ofSeconds(
                    30)) // generous: a busy CI machine must not turn into a "no answer"
            .header("x-api-key", TOKEN)
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    HttpResponse<String> r;
    try {
      r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException killed) {
      return Answer.NO_ANSWER;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Answer.NO_ANSWER;
    }
    if (r.statusCode() != expected) {
      // A 5xx or a refusal here is a bug; the test fails on it once the drivers have stopped.
      WRONG_ANSWERS.add(path + " answered " + r.statusCode() + " " + r.body());
      return Answer.NO_ANSWER;
    }
    return Answer.ACKNOWLEDGED;
  }

  // --- checking
  // -----------------------------------------------------------------------------------

  record Verdict(int acknowledged, int unanswered, int unansweredPresent) {}

  private Verdict verify(Gateway gateway, Map<String, Sent> history, List<String> brands)
      throws Exception {
    int acknowledged = 0;
    int unanswered = 0;
    int unansweredPresent = 0;
    Map<String, BigDecimal> spent = new java.util.HashMap<>();
    Map<String, BigDecimal> reserved = new java.util.HashMap<>();
    int open = 0;
    for (Sent s : history.values()) {
      JsonNode found = gateway.reservation(s.id);
      if (s.reserve == Answer.ACKNOWLEDGED) {
        acknowledged++;
        if (found == null) {
          fail("acknowledged reservation " + s.id + " is gone after the kill");
        }
      } else {
        unanswered++;
        if (found == null) {
          assertTrue(
              s.close == null, s.id + ": a close was sent for an unacknowledged reservation");
          continue;
        }
        unansweredPresent++;
      }
      assertEquals(s.id, found.get("id").asText());
      assertEquals(s.brand, found.get("brand").asText(), s.id);
      assertEquals(
          0, s.amount.compareTo(found.get("amountUsd").decimalValue()), s.id + " amount: " + found);
      String status = found.get("status").asText();
      String expectedStatus;
      if (s.close == null) {
        expectedStatus = "reserved";
      } else if (s.closeAnswer == Answer.ACKNOWLEDGED) {
        expectedStatus = s.close.equals("settle") ? "settled" : "voided";
      } else {
        // the close got no answer: either not durable (still reserved) or durable as sent
        expectedStatus =
            status.equals("reserved")
                ? "reserved"
                : s.close.equals("settle") ? "settled" : "voided";
      }
      assertEquals(expectedStatus, status, s.id + ": " + found);
      if (status.equals("reserved")) {
        assertTrue(found.get("actualUsd").isNull(), found.toString());
        reserved.merge(s.brand, s.amount, BigDecimal::add);
        open++;
      } else {
        assertEquals(
            0,
            s.actual.compareTo(found.get("actualUsd").decimalValue()),
            s.id + " actual: " + found);
        spent.merge(s.brand, s.actual, BigDecimal::add);
      }
    }
    // Ids nobody sent are unknown: the next id of every worker of every trial, and a made-up one.
    for (int trial = 1; trial <= brands.size(); trial++) {
      for (int w = 0; w < WORKERS; w++) {
        String prefix = "t" + trial + "-w" + w + "-";
        long next = history.keySet().stream().filter(id -> id.startsWith(prefix)).count();
        assertEquals(null, gateway.reservation(prefix + next), prefix + next + " was never sent");
      }
    }
    assertEquals(null, gateway.reservation("never-sent-" + System.nanoTime()));

    JsonNode all = gateway.usage(null);
    assertEquals(
        open, all.get("openReservations").asInt(), "open reservations: exactly the history's");
    BigDecimal globalSpent = BigDecimal.ZERO;
    BigDecimal globalReserved = BigDecimal.ZERO;
    for (String brand : brands) {
      JsonNode row = cap(gateway.usage(brand), "brand_daily", brand);
      BigDecimal s = spent.getOrDefault(brand, BigDecimal.ZERO);
      BigDecimal r = reserved.getOrDefault(brand, BigDecimal.ZERO);
      assertEquals(0, s.compareTo(row.get("spentUsd").decimalValue()), brand + " spent: " + row);
      assertEquals(
          0, r.compareTo(row.get("reservedUsd").decimalValue()), brand + " reserved: " + row);
      globalSpent = globalSpent.add(s);
      globalReserved = globalReserved.add(r);
    }
    JsonNode global = cap(all, "global_daily", null);
    assertEquals(
        0, globalSpent.compareTo(global.get("spentUsd").decimalValue()), "global spent: " + global);
    assertEquals(
        0,
        globalReserved.compareTo(global.get("reservedUsd").decimalValue()),
        "global reserved: " + global);
    return new Verdict(acknowledged, unanswered, unansweredPresent);
  }

  private static JsonNode cap(JsonNode usage, String cap, String subject) {
    for (JsonNode row : usage.get("caps")) {
      if (row.get("cap").asText().equals(cap)
          && (subject == null || subject.equals(row.path("subject").asText()))) {
        return row;
      }
    }
    throw new AssertionError("no " + cap + " row for " + subject + " in " + usage);
  }

  // --- the gateway process
  // ------------------------------------------------------------------------

  /** The packaged gateway as a separate JVM, started the way bin/gateway starts it. */
  static final class Gateway {
    final Process process;
    final String base;

    private Gateway(Process process, String base) {
      this.process = process;
      this.base = base;
    }

    static Gateway start(Path work, Path dataDir, int generation) throws Exception {
      GatewayProcess p =
          GatewayProcess.launch()
              .jvm("-Xmx256m")
              .token(TOKEN)
              .dataDir(dataDir)
              .port(GatewayProcess.freePort())
              .env("GATEWAY_HOST", "127.0.0.1")
              // Nobody listens there: the crash test drives only the ledger API.
              .env("OPENAI_BASE_URL", "http://127.0.0.1:9")
              .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
              .start(work.resolve("gateway-" + generation + ".log"));
      p.awaitReady(Duration.ofSeconds(60));
      return new Gateway(p.process, p.base());
    }

    /** SIGKILL: no shutdown hook, no flush, no CoordinatedShutdown. */
    void kill9() throws InterruptedException {
      process.destroyForcibly();
      assertTrue(process.waitFor(20, TimeUnit.SECONDS), "the gateway dies on SIGKILL");
      if (process.exitValue() != 137) {
        // 128 + 9: anything else means it was not a SIGKILL (e.g. it exited on its own)
        assertEquals(137, process.exitValue(), "killed by SIGKILL");
      }
    }

    /** GET /ledger/reservations/{id}: the body, or null on 404. */
    JsonNode reservation(String id) throws Exception {
      HttpResponse<String> r = get("/ledger/reservations/" + id);
      if (r.statusCode() == 404) {
        return null;
      }
      assertEquals(200, r.statusCode(), id + ": " + r.body());
      return JSON.readTree(r.body());
    }

    JsonNode usage(String brand) throws Exception {
      HttpResponse<String> r = get(brand == null ? "/usage" : "/usage?brand=" + brand);
      assertEquals(200, r.statusCode(), r.body());
      return JSON.readTree(r.body());
    }

    private HttpResponse<String> get(String path) throws Exception {
      return HTTP.send(
          HttpRequest.newBuilder(URI.create(base + path))
              .timeout(Duration.ofSeconds(10))
              .header("x-api-key", TOKEN)
              .build(),
          HttpResponse.BodyHandlers.ofString());
    }
  }
}
