package dev.spendgateway.ledger;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Writes the schema-evolution fixture: an H2 FILE journal in the first released event format (v1),
 * with every event type, one snapshot, and the {@code /usage} the live ledger answered at two
 * instants. Kept so the fixture can be understood and, for a new format, a new one written next to
 * it; the committed v1 fixture itself must never be regenerated.
 *
 * <p>Run through {@link FixtureJournalV1WriterTest} (see there for the command).
 */
public final class FixtureJournalV1 {
  /** Instant of the first usage record (after day two's activity, before compaction). */
  public static final Instant MIDWAY = Instant.parse("2026-11-16T12:00:00Z");

  /** Instant of the final usage record (after compaction, 40 days later). */
  public static final Instant END = Instant.parse("2026-12-26T12:00:00Z");

  private FixtureJournalV1() {}

  public static void main(String[] args) throws Exception {
    Path dir =
        Path.of(args.length > 0 ? args[0] : "ledger-actor/src/test/resources/fixtures/journal-v1");
    Files.createDirectories(dir);
    Files.deleteIfExists(dir.resolve("ledger.mv.db"));
    Config config =
        H2Ledger.config(dir, Map.of("ledger.snapshot-every", 10, "pekko.loglevel", "WARNING"));
    TestClock clock = TestClock.at("2026-11-15T09:00:00Z");
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fixture", config);
    try {
      LedgerSettings settings = LedgerSettings.fromConfig(config);
      ActorRef<GlobalBudget.Command> ref = Ledger.spawn(system, settings, clock);
      LedgerClient ledger = LedgerClient.of(system, ref, settings, clock);
      ledger.awaitReady().toCompletableFuture().get(30, TimeUnit.SECONDS);

      // Day one: brands b1 and b2 on the app lane, the free lane, two previews.
      reserve(ledger, "r-1", Lane.APP, "b1", 300_000, 5_000_000, 50_000_000);
      reserve(ledger, "r-2", Lane.APP, "b1", 1_200_000, 5_000_000, 50_000_000);
      reserve(ledger, "r-3", Lane.APP, "b2", 2_000_000, 2_000_000, 20_000_000);
      reserve(
          ledger, "r-4", Lane.APP, "b2", 100_000, 2_000_000, 20_000_000); // refused: brand_daily
      reserve(ledger, "r-5", Lane.FREE, null, 50_000, 0, 0);
      reserve(ledger, "r-6", Lane.TRIAL, "p1", 400_000, 0, 0);
      reserve(ledger, "r-7", Lane.TRIAL, "p1", 400_000, 0, 0); // refused: preview_lifetime
      reserve(ledger, "r-8", Lane.TRIAL, "p2", 100_000, 0, 0);
      clock.advance(Duration.ofMinutes(1));
      get(ledger.settle("r-1", 120_000));
      get(ledger.settle("r-2", 1_500_000)); // above its reserve
      get(ledger.voidReservation("r-3"));
      get(ledger.settle("r-5", 20_000));
      get(ledger.settle("r-6", 350_000));
      adjust(
          system,
          ref,
          "adj-1",
          "alice",
          "refund of a duplicate charge",
          Lane.APP,
          "b1",
          -500_000,
          dev.spendgateway.policy.caps.CapWindows.dayKey(clock.instant()));
      // r-8 is left open and expires at its worst case.
      clock.advance(Duration.ofMinutes(20));
      awaitNoneOpen(ledger, "r-8 expires at its worst case");

      // Day two.
      clock.set("2026-11-16T10:00:00Z");
      reserve(ledger, "r-9", Lane.APP, "b1", 700_000, 5_000_000, 50_000_000);
      reserve(ledger, "r-10", Lane.FREE, null, 3_500_000, 0, 0); // refused: free_daily
      reserve(ledger, "r-11", Lane.APP, "b2", 250_000, 2_000_000, 20_000_000); // stays open
      get(ledger.settle("r-9", 650_000));
      adjust(
          system,
          ref,
          "adj-2",
          "bob",
          "missed provider invoice line",
          Lane.FREE,
          null,
          1_000_000,
          dev.spendgateway.policy.caps.CapWindows.dayKey(clock.instant()));

      clock.set(MIDWAY.toString());
      List<String> midway = lines(get(ledger.usage(Optional.empty())));
      Files.write(dir.resolve("usage-midway.txt"), midway);

      // Forty days on: r-11 expires, then compaction forgets the closed ids and old windows.
      clock.set(END.toString());
      awaitNoneOpen(ledger, "r-11 expires at its worst case");
      ref.tell(new GlobalBudget.Compact());
      // Commands queue behind a persist: this answer comes once the compaction is written.
      get(ledger.usage(Optional.empty()));
      Files.write(dir.resolve("usage-end.txt"), lines(get(ledger.usage(Optional.empty()))));
      System.out.println("fixture written to " + dir.toAbsolutePath());
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** The canonical text form the fixture test compares: one line per cap, then the open count. */
  /** Waits for the ledger's expiry check (its own timer) to close every open reservation. */
  static void awaitNoneOpen(LedgerClient ledger, String what) {
    Eventually.until(
        what,
        Duration.ofSeconds(30),
        () -> get(ledger.usage(Optional.empty())).openReservations() == 0);
  }

  public static List<String> lines(Usage usage) {
    List<String> lines = new ArrayList<>();
    for (CapUsage c : usage.caps()) {
      lines.add(
          c.cap().wireName()
              + " "
              + c.subject()
              + " "
              + c.window()
              + " limit="
              + c.limitMicros()
              + " spent="
              + c.spentMicros()
              + " reserved="
              + c.reservedMicros());
    }
    lines.add("open=" + usage.openReservations());
    return lines;
  }

  private static void reserve(
      LedgerClient ledger,
      String id,
      Lane lane,
      String subject,
      long amount,
      long daily,
      long monthly)
      throws Exception {
    System.out.println(
        id
            + " -> "
            + get(ledger.reserve(new ReserveRequest(id, lane, subject, amount, daily, monthly))));
  }

  private static void adjust(
      ActorSystem<Void> system,
      ActorRef<GlobalBudget.Command> ref,
      String id,
      String operator,
      String reason,
      Lane lane,
      String subject,
      long delta,
      String window)
      throws Exception {
    get(
        AskPattern.<GlobalBudget.Command, GlobalBudget.AdjustReply>ask(
            ref,
            // The v1 form moved every cap of the lane in the current day: a refund on today's
            // window.
            replyTo ->
                new GlobalBudget.Adjust(
                    id,
                    operator,
                    reason,
                    lane,
                    subject,
                    delta,
                    window,
                    AdjustmentScope.REFUND,
                    replyTo),
            Duration.ofSeconds(5),
            system.scheduler()));
  }

  private static <T> T get(java.util.concurrent.CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
