package dev.spendgateway.edge.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.cluster.ClusterNodes.Node;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reserves {@code ids} distinct ids of one brand through the ledger API, spread over the nodes, as
 * a careful caller would: a 503 (the ledger moving) or a node that stopped answering is retried
 * with the <em>same</em> id, on the next node, until the id gets a definitive answer (201 or 402).
 * Records every definitive answer per id and node, and when the ledger was out of reach.
 */
final class LedgerHammer {
  /** A definitive answer: which node gave it, and the status. */
  record Answer(int node, int status) {}

  final Map<String, List<Answer>> answers = new ConcurrentHashMap<>();
  final List<String> unexpected = new CopyOnWriteArrayList<>();
  final AtomicInteger unavailable = new AtomicInteger();
  final AtomicInteger done = new AtomicInteger();

  /** How many ids were taken by a caller (each must end with a definitive answer). */
  private final AtomicInteger started = new AtomicInteger();

  /** When a 503 or a dead node was first met after {@link #markEvent()}; 0 while none. */
  private final AtomicLong firstOutageNanos = new AtomicLong();

  /** When the first definitive answer (201 or 402) sent after that outage came back. */
  private final AtomicLong firstSuccessAfterNanos = new AtomicLong();

  private volatile long eventNanos;

  /**
   * Nodes callers stop sending to, as a balancer whose health check failed would (a node frozen by
   * a partition: a call sent there would wait out the whole request timeout).
   */
  final Set<Integer> outOfRotation = ConcurrentHashMap.newKeySet();

  private final List<Node> nodes;
  private final String brand;
  private final String amountUsd;
  private final String capUsd;
  private final Duration requestTimeout;

  LedgerHammer(List<Node> nodes, String brand, String amountUsd, String capUsd) {
    this(nodes, brand, amountUsd, capUsd, Duration.ofSeconds(15));
  }

  /**
   * As above, giving up on a node's answer after {@code requestTimeout} (then the same id goes to
   * the next node): keep it above ledger.ask-timeout, the longest a live ledger takes to answer.
   */
  LedgerHammer(
      List<Node> nodes, String brand, String amountUsd, String capUsd, Duration requestTimeout) {
    this.nodes = nodes;
    this.brand = brand;
    this.amountUsd = amountUsd;
    this.capUsd = capUsd;
    this.requestTimeout = requestTimeout;
  }

  /**
   * Caps ("brandDailyUsd", "brandMonthlyUsd") that fit exactly {@code n} reservations of {@code
   * amountUsd}.
   */
  static String capFor(String amountUsd, int n) {
    return new BigDecimal(amountUsd).multiply(BigDecimal.valueOf(n)).toPlainString();
  }

  static String id(String brand, int i) {
    return brand + "-" + String.format("%06d", i);
  }

  /** From now on, the first outage and the first success after it are timed (a kill, a SIGTERM). */
  void markEvent() {
    eventNanos = System.nanoTime();
    firstOutageNanos.set(0);
    firstSuccessAfterNanos.set(0);
  }

  /**
   * From the first 503 (or dead node) after {@link #markEvent()} to the first decision (201/402)
   * sent after it.
   */
  Duration handOver() {
    long from = firstOutageNanos.get();
    long to = firstSuccessAfterNanos.get();
    return from == 0 || to == 0 ? Duration.ZERO : Duration.ofNanos(to - from);
  }

  /** From {@link #markEvent()} (the kill or the stop) to that first decision after the outage. */
  Duration sinceEvent() {
    long to = firstSuccessAfterNanos.get();
    return eventNanos == 0 || to == 0 ? Duration.ZERO : Duration.ofNanos(to - eventNanos);
  }

  /**
   * Runs {@code count} ids on {@code threads} callers; {@code midway} runs once {@code at} ids are
   * done.
   */
  void run(int count, int threads, Duration max, int at, Runnable midway) throws Exception {
    run(count, threads, max, at, midway, () -> true);
  }

  /**
   * As above, but once {@code count} ids are done, keeps sending new ids until {@code enough} says
   * so (e.g. until a stopped node has handed the ledger over and exited), so the hand-over happens
   * under load.
   */
  void run(
      int count,
      int threads,
      Duration max,
      int at,
      Runnable midway,
      java.util.function.BooleanSupplier enough)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long deadline = System.nanoTime() + max.toNanos();
    AtomicInteger next = new AtomicInteger();
    // Opened by the worker that brings the count of answered ids to at (or at once if it is there).
    CountDownLatch reached = new CountDownLatch(done.get() >= at ? 0 : 1);
    Thread trigger =
        new Thread(
            () -> {
              try {
                reached.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
              } catch (InterruptedException e) {
                return;
              }
              midway.run();
            });
    trigger.start();
    for (int t = 0; t < threads; t++) {
      pool.submit(
          () -> {
            int i;
            while (((i = next.getAndIncrement()) < count || !enough.getAsBoolean())
                && System.nanoTime() < deadline) {
              started.incrementAndGet();
              reserveUntilAnswered(i, deadline);
              if (done.incrementAndGet() >= at) {
                reached.countDown();
              }
            }
            return null;
          });
    }
    pool.shutdown();
    pool.awaitTermination(max.toSeconds() + 30, TimeUnit.SECONDS);
    trigger.join(TimeUnit.SECONDS.toMillis(30));
  }

  private void reserveUntilAnswered(int i, long deadline) throws InterruptedException {
    String id = id(brand, i);
    String body =
        "{\"id\":\""
            + id
            + "\",\"lane\":\"app\",\"brand\":\""
            + brand
            + "\",\"amountUsd\":"
            + amountUsd
            + ",\"brandDailyUsd\":"
            + capUsd
            + ",\"brandMonthlyUsd\":"
            + capUsd
            + "}";
    for (int attempt = 0; System.nanoTime() < deadline; attempt++) {
      Node node = nodes.get((i + attempt) % nodes.size());
      if (!node.process().isAlive() || outOfRotation.contains(node.index())) {
        continue;
      }
      long sent = System.nanoTime();
      int status;
      try {
        status =
            ClusterNodes.HTTP
                .send(
                    HttpRequest.newBuilder(URI.create(node.base() + "/ledger/reservations"))
                        .timeout(requestTimeout)
                        .header("x-api-key", ClusterNodes.TOKEN)
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                    HttpResponse.BodyHandlers.discarding())
                .statusCode();
      } catch (IOException nodeGone) {
        outage();
        Thread.sleep(50); // time is the point: a caller's pace before trying the next node
        continue;
      }
      if (status == 201 || status == 402) {
        answers
            .computeIfAbsent(id, k -> new CopyOnWriteArrayList<>())
            .add(new Answer(node.index(), status));
        // The ledger answers again: a 201, or a 402 once the cap is used up (both are its
        // decisions).
        if (firstOutageNanos.get() != 0 && sent > firstOutageNanos.get()) {
          firstSuccessAfterNanos.compareAndSet(0, System.nanoTime());
        }
        return;
      }
      if (status == 503) {
        unavailable.incrementAndGet();
        outage();
        Thread.sleep(100); // a real caller honours retry-after; the test retries sooner to time the
        // hand-over
        continue;
      }
      unexpected.add(id + " answered " + status + " by node " + node.index());
      return;
    }
  }

  private void outage() {
    if (eventNanos != 0) {
      firstOutageNanos.compareAndSet(0, System.nanoTime());
    }
  }

  /** Ids that were sent but never got a definitive answer (the run's time ran out). */
  List<String> unanswered() {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < started.get(); i++) {
      if (!answers.containsKey(id(brand, i))) {
        ids.add(id(brand, i));
      }
    }
    return ids;
  }

  /** Ids whose definitive answer was a reservation. */
  List<String> accepted() {
    List<String> ids = new ArrayList<>();
    answers.forEach(
        (id, list) -> {
          if (list.get(0).status() == 201) {
            ids.add(id);
          }
        });
    return ids;
  }

  /** Ids that got different definitive answers (on one node or on two). */
  List<String> answeredDifferently() {
    List<String> ids = new ArrayList<>();
    answers.forEach(
        (id, list) -> {
          if (list.stream().map(Answer::status).distinct().count() > 1) {
            ids.add(id + " " + list);
          }
        });
    return ids;
  }

  /**
   * Exactly {@code fits} accepted, no id answered two ways, every accepted id in the journal, the
   * books on every node that is up holding exactly the cap and no more, and every node answering
   * every id as the hammer was answered.
   */
  void checkBooks(ClusterNodes cluster, int ids, int fits) throws Exception {
    assertTrue(unexpected.isEmpty(), "unexpected answers: " + unexpected);
    assertTrue(answers.size() >= ids, "every id got a definitive answer: " + answers.size());
    assertTrue(unanswered().isEmpty(), "ids without a definitive answer: " + unanswered());
    assertTrue(answeredDifferently().isEmpty(), "ids answered two ways: " + answeredDifferently());
    List<String> accepted = accepted();
    assertEquals(fits, accepted.size(), "exactly the reservations the cap fits");

    List<byte[]> payloads = cluster.journalPayloads();
    for (String id : accepted) {
      byte[] wanted = id.getBytes(StandardCharsets.UTF_8);
      assertTrue(
          payloads.stream().anyMatch(p -> contains(p, wanted)),
          id + " acknowledged but not in the journal");
    }

    for (Node node : cluster.nodes) {
      if (!node.process().isAlive()) {
        continue;
      }
      assertEquals(
          0,
          brandDaily(node, 3).compareTo(new BigDecimal(capUsd)),
          "node " + node.index() + " holds exactly the cap");
      // Every id looked up on this node, 16 at a time (one by one this was most of a phase's
      // checks).
      List<Map.Entry<String, List<Answer>>> all = List.copyOf(answers.entrySet());
      ExecutorService lookups = Executors.newFixedThreadPool(16);
      try {
        List<Future<String>> views = new ArrayList<>();
        for (var entry : all) {
          views.add(
              lookups.submit(
                  () -> ClusterNodes.get(node, "/ledger/reservations/" + entry.getKey())));
        }
        for (int i = 0; i < all.size(); i++) {
          String view = views.get(i).get(60, TimeUnit.SECONDS);
          String expected =
              all.get(i).getValue().get(0).status() == 201
                  ? "\"status\":\"reserved\""
                  : "\"status\":\"refused\"";
          assertTrue(
              view.contains(expected),
              "node " + node.index() + " on " + all.get(i).getKey() + ": " + view);
        }
      } finally {
        lookups.shutdownNow();
      }
    }
  }

  /**
   * Settles every accepted id at its full amount through {@code through} (in turn), then checks
   * that the brand's settled spend on every node that is up is exactly the accepted ids' amounts
   * and nothing is held any more: what was acknowledged is what was spent, no more, no less.
   */
  void settleAcceptedAndCheckSpend(ClusterNodes cluster, List<Node> through) throws Exception {
    List<String> accepted = accepted();
    String body = "{\"actualUsd\":" + amountUsd + "}";
    for (int i = 0; i < accepted.size(); i++) {
      Node node = through.get(i % through.size());
      String id = accepted.get(i);
      HttpResponse<String> settled =
          ClusterNodes.HTTP.send(
              HttpRequest.newBuilder(
                      URI.create(node.base() + "/ledger/reservations/" + id + "/settle"))
                  .timeout(requestTimeout)
                  .header("x-api-key", ClusterNodes.TOKEN)
                  .header("content-type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(
          200, settled.statusCode(), id + " on node " + node.index() + ": " + settled.body());
    }
    BigDecimal spent = new BigDecimal(amountUsd).multiply(BigDecimal.valueOf(accepted.size()));
    for (Node node : cluster.nodes) {
      if (node.process().isAlive()) {
        assertEquals(
            0,
            brandDaily(node, 2).compareTo(spent),
            "node " + node.index() + ": settled spend is what was acknowledged");
        assertEquals(
            0, brandDaily(node, 3).signum(), "node " + node.index() + ": nothing held any more");
      }
    }
  }

  /** The brand's daily cap on {@code node}'s /usage: its limit (1), spent (2) or reserved (3). */
  private BigDecimal brandDaily(Node node, int group) {
    String usage = ClusterNodes.get(node, "/usage?brand=" + brand);
    Matcher cap =
        Pattern.compile(
                "\"cap\":\"brand_daily\",\"subject\":\""
                    + brand
                    + "\",\"window\":\"[^\"]+\",\"limitUsd\":([0-9.]+),\"spentUsd\":([0-9.]+),"
                    + "\"reservedUsd\":([0-9.]+)")
            .matcher(usage);
    assertTrue(cap.find(), "node " + node.index() + ": " + usage);
    return new BigDecimal(cap.group(group));
  }

  private static boolean contains(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }
}
