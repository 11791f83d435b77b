package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.LedgerProtocol.NotFound;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.caps.CapName;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a JVM that is reserving at full speed on an H2 FILE journal (SIGKILL, mid-batch), then
 * restarts the ledger on the same file: every acknowledged reservation is there, and the books hold
 * exactly the reservations the journal admitted (acknowledged ones plus at most the batch in
 * flight, whose callers never heard back and get the same answer when they retry the id).
 */
class LedgerCrashTest {
  @TempDir Path dataDir;

  @Test
  void aKilledLedgerLosesNoAcknowledgedReservation() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Process victim =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                CrashVictim.class.getName(),
                dataDir.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    Set<String> acked = new HashSet<>();
    try (BufferedReader out =
        new BufferedReader(
            new InputStreamReader(victim.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith("ACK ")) {
          acked.add(line.substring(4));
          if (acked.size() == 1000) {
            victim
                .toHandle()
                .destroyForcibly(); // SIGKILL (streams stay open to read what it printed): no
            // shutdown hook, no flush, whatever batch is in flight
          }
        }
      }
    } finally {
      victim.destroyForcibly();
      victim.waitFor(10, TimeUnit.SECONDS);
    }
    assertTrue(acked.size() >= 1000, "victim acknowledged only " + acked.size());

    try (H2Ledger ledger = H2Ledger.start(dataDir, CrashVictim.CAPS)) {
      for (String id : acked) {
        ReservationReply r = ledger.client.get(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(
            Status.RESERVED, ((ReservationView) r).status(), "acknowledged " + id + " was lost");
      }
      // Count what the journal admitted: ids are issued in order, at most 64 in flight.
      int admitted = 0;
      int misses = 0;
      for (int n = 0; misses < 200; n++) {
        ReservationReply r =
            ledger.client.get("c-" + n).toCompletableFuture().get(10, TimeUnit.SECONDS);
        if (r instanceof NotFound) {
          misses++;
        } else {
          admitted++;
        }
      }
      assertTrue(admitted >= acked.size());
      // Durable but unanswered when the JVM died: at most the 64 callers in flight.
      assertTrue(
          admitted - acked.size() <= 64,
          "unacknowledged but durable: " + (admitted - acked.size()));
      long reserved =
          ledger
              .client
              .usage(Optional.empty())
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS)
              .caps()
              .stream()
              .filter(c -> c.cap() == CapName.GLOBAL_DAILY)
              .findFirst()
              .orElseThrow()
              .reservedMicros();
      assertEquals(
          admitted * 300_000L, reserved, "the books hold exactly the admitted reservations");
    }
  }
}
