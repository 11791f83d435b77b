package dev.spendgateway.ledger;

import com.typesafe.config.Config;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Writes the second schema fixture: an H2 FILE journal in the format with compaction v2 (separate
 * cutoffs for cap windows, ids and past-id filters) and snapshot v2 (open reservations, packed ids,
 * filters), with ids inside the idempotency window and ids moved past it. Records the {@code
 * /usage} and the answer each repeated id got at {@link #END}. The committed fixture must never be
 * regenerated; a later format gets a v3 next to it.
 *
 * <p>Run through {@link FixtureJournalV2WriterTest}.
 */
public final class FixtureJournalV2 {
  static final Instant START = Instant.parse("2026-12-01T09:00:00Z");

  /** Before b-3 (reserved at START + 2h, 15 min timeout) expires, so it is still open. */
  static final Instant END = START.plus(Duration.ofMinutes(130));

  /**
   * The config the fixture was written with (and is read back with): a 1h window, small snapshots.
   */
  static final Map<String, Object> OVERRIDES =
      Map.of(
          "ledger.snapshot-every",
          10,
          "ledger.idempotency-window",
          "1h",
          "pekko.loglevel",
          "WARNING");

  /** The ids whose repeat at {@link #END} is recorded, with the request each repeats. */
  static final List<ReserveRequest> REPEATS =
      List.of(
          new ReserveRequest(
              "a-1", Lane.APP, "b1", 300_000, 5_000_000, 50_000_000), // past the window: id_reused
          new ReserveRequest(
              "a-3", Lane.TRIAL, "p1", 700_000, 0, 0), // refused, past the window: id_reused
          new ReserveRequest(
              "b-1", Lane.APP, "b1", 200_000, 5_000_000, 50_000_000), // settled in the window
          new ReserveRequest("b-2", Lane.TRIAL, "p1", 700_000, 0, 0), // refused in the window
          new ReserveRequest("b-3", Lane.FREE, null, 100_000, 0, 0)); // open

  private FixtureJournalV2() {}

  public static void main(String[] args) throws Exception {
    Path dir =
        Path.of(args.length > 0 ? args[0] : "ledger-actor/src/test/resources/fixtures/journal-v2");
    Files.createDirectories(dir);
    Files.deleteIfExists(dir.resolve("ledger.mv.db"));
    Config config = H2Ledger.config(dir, OVERRIDES);
    TestClock clock = new TestClock(START);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fixture", config);
    try {
      LedgerSettings settings = LedgerSettings.fromConfig(config);
      ActorRef<GlobalBudget.Command> ref = Ledger.spawn(system, settings, clock);
      LedgerClient ledger = LedgerClient.of(system, ref, settings, clock);
      get(ledger.awaitReady());

      get(ledger.reserve(REPEATS.get(0)));
      get(ledger.reserve(new ReserveRequest("a-2", Lane.FREE, null, 50_000, 0, 0)));
      get(ledger.reserve(REPEATS.get(1)));
      get(ledger.settle("a-1", 250_000));
      get(ledger.voidReservation("a-2"));
      for (int i = 0; i < 12; i++) { // enough events for a snapshot
        get(ledger.reserve(new ReserveRequest("a-bulk-" + i, Lane.FREE, null, 10_000, 0, 0)));
        get(ledger.settle("a-bulk-" + i, 5_000));
      }

      // Two hours on: the a-ids leave the 1h window (into the past-id filter).
      clock.set(START.plus(Duration.ofHours(2)).toString());
      ref.tell(new GlobalBudget.Compact());
      // Commands queue behind a persist: this answer comes once the compaction is written.
      get(ledger.usage(Optional.empty()));
      get(ledger.reserve(REPEATS.get(2)));
      get(ledger.settle("b-1", 180_000));
      get(ledger.reserve(REPEATS.get(3)));
      get(ledger.reserve(REPEATS.get(4)));

      clock.set(END.toString());
      Files.write(
          dir.resolve("usage-end.txt"),
          FixtureJournalV1.lines(get(ledger.usage(Optional.empty()))));
      Files.write(dir.resolve("answers-end.txt"), answers(ledger));
      System.out.println("fixture written to " + dir.toAbsolutePath());
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** Each repeat's answer, one line per id. */
  static List<String> answers(LedgerClient ledger) throws Exception {
    List<String> lines = new ArrayList<>();
    for (ReserveRequest r : REPEATS) {
      lines.add(r.id() + " -> " + get(ledger.reserve(r)));
    }
    return lines;
  }

  static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
