package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.MediaJobOpened;
import dev.spendgateway.ledger.LedgerEvents.MediaJobSubmitted;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Command;
import dev.spendgateway.ledger.LedgerProtocol.ExpireDue;
import dev.spendgateway.ledger.LedgerProtocol.GetOpenMediaJobs;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobClosed;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobRecorded;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobRefused;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobReserved;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobsFull;
import dev.spendgateway.ledger.LedgerProtocol.MediaReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.OpenMediaJob;
import dev.spendgateway.ledger.LedgerProtocol.OpenMediaJobs;
import dev.spendgateway.ledger.LedgerProtocol.RecordMediaJob;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveMediaJob;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.LedgerProtocol.VoidReservation;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Media jobs in the ledger: a reservation that carries its job, the unfinished jobs of an account
 * counted by the ledger, the media lifetime, idempotent repeats, and all of it after a restart.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@ExtendWith(LogCapturingExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MediaJobLedgerTest {
  private static final Duration LIFETIME = Duration.ofHours(2);
  private static final int LIMIT = 5;

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()))
          .build();

  private final TestClock clock = TestClock.at("2026-11-30T10:00:00Z");
  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit;

  @BeforeEach
  void setUp() {
    clock.set("2026-11-30T10:00:00Z");
    kit = newKit(1000);
  }

  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> newKit(int snapshotEvery) {
    EventSourcedBehaviorTestKit<Command, Event, LedgerState> k =
        EventSourcedBehaviorTestKit.create(
            testKit.system(),
            GlobalBudget.create(GlobalBudgetTest.settings(snapshotEvery), clock),
            EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyCommands(false));
    k.clear();
    return k;
  }

  private static long usd(String amount) {
    return GlobalBudgetTest.usd(amount);
  }

  private CommandResultWithReply<Command, Event, LedgerState, MediaReserveReply> submit(
      String id, String account, String key, String amount) {
    return kit.runCommand(
        replyTo ->
            new ReserveMediaJob(
                new Reserve(id, Lane.APP, "b1", usd(amount), usd("50"), usd("500"), null),
                account,
                key,
                LIMIT,
                LIFETIME,
                replyTo));
  }

  private MediaJobRecorded record(String id, String jobId) {
    return kit.<MediaJobRecorded>runCommand(replyTo -> new RecordMediaJob(id, jobId, replyTo))
        .reply();
  }

  private List<OpenMediaJob> openJobs() {
    return kit.<OpenMediaJobs>runCommand(GetOpenMediaJobs::new).reply().jobs();
  }

  @Test
  void aMediaJobIsHeldForTheMediaLifetimeWithItsJobJournaledInTheSameRow() {
    var result = submit("gw-m1", "acct", "clip-1", "0.80");
    assertEquals(new MediaJobReserved("gw-m1", usd("0.80"), null, true), result.reply());
    GroupCommit row = result.eventOfType(GroupCommit.class);
    ReservationMade made = assertInstanceOf(ReservationMade.class, row.facts().get(0));
    assertEquals(clock.instant().plus(LIFETIME), made.expiresAt());
    assertEquals(
        new MediaJobOpened("gw-m1", "acct", "clip-1", clock.instant()), row.facts().get(1));
    Reservation held = result.state().reservation("gw-m1").orElseThrow();
    assertEquals(new MediaJob("acct", "clip-1", null), held.media());
    assertEquals(1, result.state().unfinishedMediaJobs("acct"));
  }

  @Test
  void aSixthUnfinishedJobOfAnAccountIsRefusedWithNothingWritten() {
    for (int i = 1; i <= LIMIT; i++) {
      assertInstanceOf(MediaJobReserved.class, submit("gw-m" + i, "acct", null, "0.40").reply());
    }
    var sixth = submit("gw-m6", "acct", null, "0.40");
    assertEquals(new MediaJobsFull("gw-m6", LIMIT, LIMIT), sixth.reply());
    assertTrue(sixth.hasNoEvents());
    assertTrue(sixth.state().reservation("gw-m6").isEmpty());
    // Another account has its own limit; an ordinary reservation is not a media job.
    assertInstanceOf(MediaJobReserved.class, submit("gw-o1", "other", null, "0.40").reply());
    assertEquals(LIMIT, kit.getState().unfinishedMediaJobs("acct"));
  }

  @Test
  void aFinishedJobFreesItsSlot() {
    for (int i = 1; i <= LIMIT; i++) {
      submit("gw-m" + i, "acct", null, "0.40");
    }
    kit.<CloseReply>runCommand(r -> new Settle("gw-m1", usd("0.40"), Owner.GATEWAY, r));
    kit.<CloseReply>runCommand(r -> new VoidReservation("gw-m2", Owner.GATEWAY, r));
    assertInstanceOf(MediaJobReserved.class, submit("gw-m6", "acct", null, "0.40").reply());
    assertInstanceOf(MediaJobReserved.class, submit("gw-m7", "acct", null, "0.40").reply());
    assertInstanceOf(MediaJobsFull.class, submit("gw-m8", "acct", null, "0.40").reply());
  }

  @Test
  void aRepeatAnswersTheSameJobAndNeverReservesTwice() {
    submit("gw-k", "acct", "clip-1", "0.80");
    assertEquals(new MediaJobRecorded("gw-k", true), record("gw-k", "video_1"));
    var again = submit("gw-k", "acct", "clip-1", "0.80");
    assertEquals(new MediaJobReserved("gw-k", usd("0.80"), "video_1", false), again.reply());
    assertTrue(again.hasNoEvents());
    assertEquals(1, kit.getState().unfinishedMediaJobs("acct"));
    // Recording the same id again changes nothing; another id is not taken.
    assertEquals(new MediaJobRecorded("gw-k", true), record("gw-k", "video_1"));
    assertEquals(new MediaJobRecorded("gw-k", false), record("gw-k", "video_2"));
    // Once the job ended, its id answers that it is closed, naming the job it paid for: the caller
    // gets that job back, and it is never submitted again.
    kit.<CloseReply>runCommand(r -> new Settle("gw-k", usd("0.80"), Owner.GATEWAY, r));
    var afterEnd = submit("gw-k", "acct", "clip-1", "0.80");
    assertEquals(new MediaJobClosed("gw-k", Status.SETTLED, "video_1"), afterEnd.reply());
    assertTrue(afterEnd.hasNoEvents());
    assertEquals(0, afterEnd.state().unfinishedMediaJobs("acct"));
  }

  @Test
  void anEndedKeyedJobIsNamedForTheIdempotencyWindowAcrossARestartThenForgotten() {
    kit = newKit(3);
    submit("gw-k1", "acct", "clip-1", "0.80");
    record("gw-k1", "video_1");
    submit("gw-k2", "acct", "clip-2", "0.80");
    record("gw-k2", "video_2");
    // One completed, one failed (voided at $0): both keys answer their job.
    kit.<CloseReply>runCommand(r -> new Settle("gw-k1", usd("0.80"), Owner.GATEWAY, r));
    kit.<CloseReply>runCommand(r -> new VoidReservation("gw-k2", Owner.GATEWAY, r));
    // A job without a key, or whose submit never got a job id, names none.
    submit("gw-n", "acct", null, "0.40");
    record("gw-n", "video_n");
    kit.<CloseReply>runCommand(r -> new Settle("gw-n", usd("0.40"), Owner.GATEWAY, r));
    assertTrue(kit.getState().endedMediaJob("gw-n").isEmpty());
    submit("gw-u", "acct", "clip-u", "0.40");
    kit.<CloseReply>runCommand(r -> new VoidReservation("gw-u", Owner.GATEWAY, r));
    assertEquals(
        new MediaJobClosed("gw-u", Status.VOIDED),
        submit("gw-u", "acct", "clip-u", "0.40").reply());

    assertTrue(kit.snapshotTestKit().isPresent());
    LedgerState fromSnapshot = kit.restart().state();
    assertEquals("video_1", fromSnapshot.endedMediaJob("gw-k1").orElseThrow().jobId());
    assertEquals(
        new MediaJobClosed("gw-k2", Status.VOIDED, "video_2"),
        submit("gw-k2", "acct", "clip-2", "0.80").reply());
    kit.snapshotTestKit().orElseThrow().clearAll();
    LedgerState fromJournalOnly = kit.restart().state();
    assertEquals(fromSnapshot.endedMediaJobs().size(), fromJournalOnly.endedMediaJobs().size());
    assertEquals(
        new MediaJobClosed("gw-k1", Status.SETTLED, "video_1"),
        submit("gw-k1", "acct", "clip-1", "0.80").reply());

    // Its id leaves the idempotency window, and the job with it.
    LedgerState later =
        kit.getState().idsExpiredBefore(clock.instant().plus(Duration.ofDays(2)), null);
    assertTrue(later.endedMediaJob("gw-k1").isEmpty());
    assertTrue(later.endedMediaJobs().isEmpty());
  }

  @Test
  void aCapRefusalIsJournaledAndAnsweredAsRefused() {
    // Brand b1's daily cap is $50 in these submits.
    var refused = submit("gw-big", "acct", null, "60");
    MediaJobRefused r = assertInstanceOf(MediaJobRefused.class, refused.reply());
    assertEquals("gw-big", r.refused().id());
    assertEquals(0, refused.state().unfinishedMediaJobs("acct"));
  }

  @Test
  void theJobIdIsRecordedAndTheOpenJobsListed() {
    submit("gw-a", "acct", "k1", "0.40");
    submit("gw-b", "acct", null, "0.80");
    var recorded =
        kit.<MediaJobRecorded>runCommand(replyTo -> new RecordMediaJob("gw-a", "video_a", replyTo));
    assertEquals(
        new MediaJobSubmitted("gw-a", "video_a", clock.instant()),
        recorded.eventOfType(MediaJobSubmitted.class));
    List<OpenMediaJob> open = openJobs();
    assertEquals(2, open.size());
    OpenMediaJob a = open.stream().filter(j -> j.id().equals("gw-a")).findFirst().orElseThrow();
    assertEquals("video_a", a.jobId());
    assertEquals("k1", a.idempotencyKey());
    OpenMediaJob b = open.stream().filter(j -> j.id().equals("gw-b")).findFirst().orElseThrow();
    assertNull(b.jobId());
    // A closed reservation takes no job id.
    kit.<CloseReply>runCommand(r -> new VoidReservation("gw-b", Owner.GATEWAY, r));
    assertEquals(new MediaJobRecorded("gw-b", false), record("gw-b", "video_b"));
  }

  @Test
  void openJobsTheirCountAndTheirJobIdsSurviveARestartFromJournalAndSnapshot() {
    kit = newKit(3);
    for (int i = 1; i <= LIMIT; i++) {
      submit("gw-m" + i, "acct", "clip-" + i, "0.40");
      record("gw-m" + i, "video_" + i);
    }
    LedgerState before = kit.getState();
    assertTrue(kit.snapshotTestKit().isPresent());

    LedgerState fromSnapshot = kit.restart().state();
    assertEquals(before, fromSnapshot);
    assertEquals(LIMIT, fromSnapshot.unfinishedMediaJobs("acct"));
    assertInstanceOf(MediaJobsFull.class, submit("gw-m6", "acct", null, "0.40").reply());
    assertEquals(
        new MediaJobReserved("gw-m3", usd("0.40"), "video_3", false),
        submit("gw-m3", "acct", "clip-3", "0.40").reply());

    kit.snapshotTestKit().orElseThrow().clearAll();
    LedgerState fromJournalOnly = kit.restart().state();
    assertEquals(before, fromJournalOnly);
    assertEquals(5, openJobs().stream().filter(j -> j.jobId() != null).count());
  }

  @Test
  void aJobThatNeverEndsExpiresAtItsWorstCaseAfterTheMediaLifetimeOnly() {
    submit("gw-m1", "acct", null, "0.80");
    // Past the ordinary reservation timeout (15 min) it is still held.
    clock.advance(Duration.ofMinutes(30));
    kit.runCommand(new ExpireDue());
    assertTrue(kit.getState().reservation("gw-m1").orElseThrow().isOpen());
    clock.advance(LIFETIME);
    var expired = kit.runCommand(new ExpireDue());
    ReservationExpired e = expired.eventOfType(ReservationExpired.class);
    assertEquals(usd("0.80"), e.reservedMicros());
    assertEquals(0, expired.state().unfinishedMediaJobs("acct"));
    // A late settle gets the first result.
    assertEquals(
        new Closed("gw-m1", Status.EXPIRED, usd("0.80")),
        kit.<CloseReply>runCommand(r -> new Settle("gw-m1", usd("0.10"), Owner.GATEWAY, r))
            .reply());
  }
}
