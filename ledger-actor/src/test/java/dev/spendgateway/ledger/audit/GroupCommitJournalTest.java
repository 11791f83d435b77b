package dev.spendgateway.ledger.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.AdjustmentScope;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.ledger.journal.JournalSyncStats;
import dev.spendgateway.ledger.journal.JournalWriter;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapWindows;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A group commit is one journal row ({@link GroupCommit}) on the H2 FILE journal: parallel reserves
 * make one row per batch, not one per fact; recovery and the audit tools read such rows as the same
 * books as a journal of one fact per row (the CLI's export and verify of such rows: operator-cli's
 * GroupCommitExportTest).
 */
class GroupCommitJournalTest {
  private static final long WAIT_SECONDS = 30;
  @TempDir Path dataDir;
  @TempDir Path perFactDir;

  @Test
  void parallelReservesAreWrittenAsOneRowPerBatch() throws Exception {
    int reserves = 200;
    try (H2Ledger ledger = H2Ledger.start(dataDir, Map.of())) {
      JournalReader reader = new JournalReader(ledger.system);
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      long rowsBefore = await(reader.lastSequenceNr());
      long writesBefore = stats.writes();

      List<CompletionStage<?>> calls = new ArrayList<>();
      for (int i = 0; i < reserves; i++) {
        calls.add(
            ledger.client.reserve(
                new ReserveRequest(
                    "p-" + i, Lane.APP, "b" + (i % 4), 1_000, 1_000_000, 10_000_000)));
      }
      for (CompletionStage<?> call : calls) {
        assertTrue(
            call.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS) instanceof Reserved);
      }

      long rows = await(reader.lastSequenceNr()) - rowsBefore;
      long writes = stats.writes() - writesBefore;
      List<Journaled> facts =
          await(reader.current(rowsBefore + 1).runWith(Sink.seq(), ledger.system));
      assertEquals(reserves, facts.size(), "every reservation is one fact");
      assertEquals(writes, rows, "one row per journal write (group commit)");
      assertEquals(rows, facts.stream().map(Journaled::sequenceNr).distinct().count());
      assertEquals(rows, facts.stream().filter(Journaled::endsRow).count(), "each row ends once");
      assertTrue(rows <= reserves / 4, rows + " rows for " + reserves + " parallel reserves");
    }
  }

  @Test
  void recoveryAndReplayOfGroupCommitRowsGiveTheBooksOfOneFactPerRow() throws Exception {
    String liveUsage;
    List<Event> facts;
    long rows;
    try (H2Ledger ledger = H2Ledger.start(dataDir, Map.of())) {
      workload(ledger.client);
      liveUsage = usage(ledger.client);
      JournalReader reader = new JournalReader(ledger.system);
      rows = await(reader.lastSequenceNr());
      facts =
          await(reader.current(1).runWith(Sink.seq(), ledger.system)).stream()
              .map(Journaled::event)
              .toList();

      // The audit tools fold the expanded facts one by one: the same books.
      LedgerAudit replayed =
          await(
              AuditRuns.replay(
                  ledger.system,
                  reader.current(1),
                  Optional.empty(),
                  new LedgerAudit(ledger.settings.caps()),
                  Progress.silent()));
      assertEquals(liveUsage, UsageReport.json(replayed.usage(Instant.now())));
    }
    assertTrue(
        rows < facts.size(),
        rows + " rows for " + facts.size() + " facts: the journal has group-commit rows");
    assertFalse(facts.stream().anyMatch(f -> f instanceof GroupCommit), "readers see facts only");

    // The ledger's own recovery of the group-commit rows.
    try (H2Ledger recovered = H2Ledger.start(dataDir, Map.of())) {
      assertEquals(liveUsage, usage(recovered.client));
    }

    // The same facts written one per row (as every journal was before), recovered by the ledger.
    try (H2Ledger empty = H2Ledger.start(perFactDir, Map.of())) {
      // creates the journal schema; nothing is written
    }
    writeOnePerRow(perFactDir, facts);
    try (H2Ledger perFact = H2Ledger.start(perFactDir, Map.of())) {
      assertEquals(
          facts.size(),
          await(new JournalReader(perFact.system).lastSequenceNr()),
          "one row per fact");
      assertEquals(liveUsage, usage(perFact.client));
    }
  }

  @Test
  void aGroupCommitIsVersionedCborAndRoundTripsWithEveryFactsType() throws Exception {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "group-commit-cbor");
    try {
      Instant at = Instant.parse("2026-12-01T10:00:00Z");
      GroupCommit row =
          new GroupCommit(
              List.of(
                  new ReservationMade(
                      "r-1",
                      Lane.APP,
                      "b1",
                      300_000,
                      5_000_000,
                      50_000_000,
                      at,
                      at.plusSeconds(900)),
                  new GlobalBudget.ReservationRefused(
                      "r-2",
                      Lane.TRIAL,
                      "p1",
                      300_000,
                      0,
                      0,
                      dev.spendgateway.policy.caps.CapName.PREVIEW_LIFETIME,
                      "p1",
                      "lifetime",
                      600_000,
                      200_000,
                      at),
                  new ReservationSettled(
                      "r-1", Lane.APP, "b1", at, 300_000, 120_000, at.plusSeconds(3)),
                  new GlobalBudget.ReservationVoided(
                      "r-3", Lane.FREE, null, at, 300_000, at.plusSeconds(3)),
                  new GlobalBudget.ReservationExpired(
                      "r-4", Lane.FREE, null, at, 300_000, at.plusSeconds(901)),
                  new GlobalBudget.SpendAdjusted(
                      "adj-1", "alice", "refund", Lane.APP, "b1", -1_000_000, at),
                  new GlobalBudget.Compacted(at.minusSeconds(86_400 * 35), at)));
      var serialization = SerializationExtension.get(system.classicSystem());
      var serializer = serialization.findSerializerFor(row);
      assertEquals("JacksonCborSerializer", serializer.getClass().getSimpleName());
      byte[] bytes = serialization.serialize(row).get();
      Object read =
          serialization
              .deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, row))
              .get();
      assertEquals(row, read);
      assertEquals(at, row.at(), "a row is as late as its last fact");
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }

  // --- helpers
  // -------------------------------------------------------------------------------------

  /** Parallel reserves, settles and voids, a refusal and an operator adjustment. */
  private static void workload(LedgerClient client) throws Exception {
    List<CompletionStage<?>> calls = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      calls.add(
          client.reserve(
              new ReserveRequest(
                  "r-" + i, Lane.APP, "b" + (i % 3), 10_000, 1_000_000, 10_000_000)));
    }
    awaitAll(calls);
    calls.clear();
    for (int i = 0; i < 80; i++) {
      calls.add(i % 4 == 0 ? client.voidReservation("r-" + i) : client.settle("r-" + i, 7_000 + i));
    }
    calls.add(
        client.reserve(
            new ReserveRequest("big", Lane.APP, "b0", 2_000_000, 1_000_000, 10_000_000)));
    calls.add(client.reserve(new ReserveRequest("free-1", Lane.FREE, null, 40_000, 0, 0)));
    awaitAll(calls);
    await(
        client.adjust(
            "adj-1",
            "alice",
            "refund",
            Lane.APP,
            "b1",
            -30_000,
            CapWindows.dayKey(Instant.now()),
            AdjustmentScope.REFUND));
  }

  private static String usage(LedgerClient client) throws Exception {
    return UsageReport.json(await(client.usage(Optional.empty())));
  }

  /** Command of the one-fact-per-row writer: persist each event as its own row. */
  private record Write(List<Event> events, ActorRef<Done> replyTo) {}

  /**
   * Writes {@code facts} into the ledger's journal in {@code dir}, one row each, as the ledger did
   * before group-commit rows.
   */
  private static void writeOnePerRow(Path dir, List<Event> facts) throws Exception {
    ActorSystem<Void> system =
        ActorSystem.create(Behaviors.empty(), "per-fact-writer", H2Ledger.config(dir, Map.of()));
    try {
      ActorRef<Write> writer =
          system.systemActorOf(
              onePerRowWriter(), "writer", org.apache.pekko.actor.typed.Props.empty());
      await(
          AskPattern.<Write, Done>ask(
              writer,
              replyTo -> new Write(facts, replyTo),
              java.time.Duration.ofSeconds(30),
              system.scheduler()));
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }

  private static Behavior<Write> onePerRowWriter() {
    return new EventSourcedBehavior<Write, Event, Integer>(GlobalBudget.PERSISTENCE_ID) {
      @Override
      public Integer emptyState() {
        return 0;
      }

      @Override
      public CommandHandler<Write, Event, Integer> commandHandler() {
        return newCommandHandlerBuilder()
            .forAnyState()
            .onCommand(
                Write.class,
                (state, w) ->
                    Effect().persist(w.events()).thenReply(w.replyTo(), s -> Done.getInstance()))
            .build();
      }

      @Override
      public EventHandler<Integer, Event> eventHandler() {
        return newEventHandlerBuilder().forAnyState().onAnyEvent((state, e) -> state + 1);
      }
    };
  }

  private static void awaitAll(List<CompletionStage<?>> calls) throws Exception {
    CompletableFuture.allOf(
            calls.stream()
                .map(CompletionStage::toCompletableFuture)
                .toArray(CompletableFuture[]::new))
        .get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
  }
}
