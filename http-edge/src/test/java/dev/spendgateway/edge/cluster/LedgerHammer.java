package dev.spendgateway.edge.cluster;

import dev.spendgateway.edge.cluster.ClusterNodes.Node;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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

  private final List<Node> nodes;
  private final String brand;
  private final String amountUsd;
  private final String capUsd;

  LedgerHammer(List<Node> nodes, String brand, String amountUsd, String capUsd) {
    this.nodes = nodes;
    this.brand = brand;
    this.amountUsd = amountUsd;
    this.capUsd = capUsd;
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
      if (!node.process().isAlive()) {
        continue;
      }
      long sent = System.nanoTime();
      int status;
      try {
        status =
            ClusterNodes.HTTP
                .send(
                    HttpRequest.newBuilder(URI.create(node.base() + "/ledger/reservations"))
                        .timeout(Duration.ofSeconds(15))
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
}
