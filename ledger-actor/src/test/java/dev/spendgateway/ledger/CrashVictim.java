package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.policy.access.Lane;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Semaphore;

/**
 * Run in a child JVM by {@link LedgerCrashTest}: reserves as fast as 64 concurrent callers can on
 * an H2 FILE ledger and prints {@code ACK <id>} for every reservation it was told is durable, until
 * the test kills the JVM (SIGKILL) in the middle of a batch.
 */
public final class CrashVictim {
  static final Map<String, Object> CAPS =
      Map.of(
          "ledger.caps.global-daily-usd", 100_000,
          "ledger.caps.global-monthly-usd", 1_000_000);

  public static void main(String[] args) throws Exception {
    H2Ledger ledger = H2Ledger.start(Path.of(args[0]), CAPS);
    PrintStream out = System.out;
    out.println("READY");
    out.flush();
    Semaphore inFlight = new Semaphore(64);
    for (long n = 0; ; n++) {
      inFlight.acquire();
      String id = "c-" + n;
      ledger
          .client
          .reserve(
              new ReserveRequest(
                  id, Lane.APP, "b1", 300_000, 1_000_000_000_000L, 1_000_000_000_000L))
          .whenComplete(
              (reply, failure) -> {
                if (reply instanceof Reserved) {
                  synchronized (out) {
                    out.println("ACK " + id);
                    out.flush();
                  }
                }
                inFlight.release();
              });
    }
  }
}
