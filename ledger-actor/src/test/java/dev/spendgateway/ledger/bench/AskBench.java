package dev.spendgateway.ledger.bench;

import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The ledger client's ask alone, against a stand-in ledger that answers every reserve at once: how
 * much Pekko's ask (a temporary actor per ask) costs against the client's direct reply target. The
 * two alternate in short blocks in one JVM, so a machine shared with other work loads both alike;
 * read the ratio, not the absolute figures.
 *
 * <pre>
 * java -cp (the classpath loadtest/ledger-write-path.sh builds) \
 *   -Dask.callers=1,64 -Dask.blocks=6 -Dask.seconds=2 dev.spendgateway.ledger.bench.AskBench
 * </pre>
 */
public final class AskBench {
  private AskBench() {}

  public static void main(String[] args) throws Exception {
    int blocks = Integer.getInteger("ask.blocks", 6);
    int seconds = Integer.getInteger("ask.seconds", 2);
    String[] levels = System.getProperty("ask.callers", "1,64").split(",");
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "ask-bench");
    try {
      ActorRef<Object> ledger =
          system.systemActorOf(
              Behaviors.receiveMessage(
                  message -> {
                    if (message instanceof Reserve r) {
                      r.replyTo().tell(new Reserved(r.id(), r.amountMicros()));
                    }
                    return Behaviors.same();
                  }),
              "stand-in-ledger",
              Props.empty());
      LedgerClient pekko =
          new LedgerClient(
              ledger.narrow(),
              system.scheduler(),
              system.executionContext(),
              Duration.ofSeconds(5));
      LedgerClient direct = pekko.answeredDirectly(system);
      System.out.println("| callers | client | block | asks/s | p50 us | p99 us |");
      System.out.println("|---|---|---|---|---|---|");
      for (String level : levels) {
        int callers = Integer.parseInt(level.trim());
        run(pekko, callers, 1); // warm-up, not printed
        run(direct, callers, 1);
        for (int b = 1; b <= blocks; b++) {
          print(callers, "pekko ask", b, run(pekko, callers, seconds));
          print(callers, "direct", b, run(direct, callers, seconds));
        }
      }
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private record Block(double perSecond, long p50, long p99) {}

  private static void print(int callers, String client, int block, Block b) {
    System.out.printf(
        "| %d | %s | %d | %,.0f | %d | %d |%n", callers, client, block, b.perSecond, b.p50, b.p99);
  }

  private static Block run(LedgerClient client, int callers, int seconds) throws Exception {
    ConcurrentHistogram latency = new ConcurrentHistogram(TimeUnit.SECONDS.toMicros(10), 3);
    AtomicLong asks = new AtomicLong();
    AtomicLong ids = new AtomicLong();
    AtomicBoolean running = new AtomicBoolean(true);
    CompletableFuture<?>[] loops = new CompletableFuture<?>[callers];
    long start = System.nanoTime();
    for (int c = 0; c < callers; c++) {
      loops[c] = new CompletableFuture<>();
      loop(client, ids, latency, asks, running, loops[c]);
    }
    // The measured block ends on a timer; what is counted is what was asked until then.
    long[] done = new long[1];
    double[] elapsed = new double[1];
    CompletableFuture.runAsync(
            () -> {
              running.set(false);
              done[0] = asks.get();
              elapsed[0] = (System.nanoTime() - start) / 1e9;
            },
            CompletableFuture.delayedExecutor(seconds, TimeUnit.SECONDS))
        .get(seconds + 30L, TimeUnit.SECONDS);
    CompletableFuture.allOf(loops).get(30, TimeUnit.SECONDS);
    return new Block(
        done[0] / elapsed[0], latency.getValueAtPercentile(50), latency.getValueAtPercentile(99));
  }

  /** One caller: ask, then ask again on the answer, until told to stop. No thread is blocked. */
  private static void loop(
      LedgerClient client,
      AtomicLong ids,
      ConcurrentHistogram latency,
      AtomicLong asks,
      AtomicBoolean running,
      CompletableFuture<?> finished) {
    if (!running.get()) {
      finished.complete(null);
      return;
    }
    long t0 = System.nanoTime();
    client
        .reserve(new ReserveRequest("ask-" + ids.incrementAndGet(), Lane.FREE, null, 1, 0, 0))
        .whenComplete(
            (reply, failure) -> {
              latency.recordValue(Math.min((System.nanoTime() - t0) / 1000, 10_000_000));
              asks.incrementAndGet();
              loop(client, ids, latency, asks, running, finished);
            });
  }
}
