package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Refusal;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The compact index of the idempotency window's ids, and the past-id filters behind it. */
class RecentIdsTest {
  private static final Instant AT = Instant.parse("2026-11-30T10:00:00Z");

  private static Reservation settled(String id, String subject, long amount, long actual) {
    return new Reservation(
        id,
        subject == null ? Lane.FREE : Lane.APP,
        subject,
        amount,
        5_000_000,
        50_000_000,
        AT,
        AT.plusSeconds(900),
        Status.SETTLED,
        actual,
        AT,
        null,
        Owner.LEDGER_API);
  }

  @Test
  void aMillionIdsCostAtMostHundredBytesEachAndAreAllFound() {
    RecentIds index = RecentIds.empty();
    int n = 1_000_000;
    for (int i = 0; i < n; i++) {
      index = index.with(settled("svc-" + i, "b" + (i % 50), 1000 + i, 500 + i), AT.plusMillis(i));
    }
    long bytes = index.retainedBytes();
    double perId = (double) bytes / n;
    System.out.printf(
        "recent-id index: %d ids, %d bytes retained, %.1f bytes per id%n", n, bytes, perId);
    assertTrue(perId <= 100, "bytes per id " + perId);
    assertEquals(n, index.size());
    for (int i = 0; i < n; i += 997) {
      RecentIds.Entry e = index.find("svc-" + i);
      assertEquals(Status.SETTLED, e.status());
      assertEquals("b" + (i % 50), e.subject());
      assertEquals(1000 + i, e.amountMicros());
      assertEquals(500 + i, e.actualMicros());
    }
    assertNull(index.find("svc-" + n));
  }

  @Test
  void aRefusalKeepsItsCapSubjectAndHeadroom() {
    Reservation refused =
        new Reservation(
            "r-1",
            Lane.TRIAL,
            "p1",
            400_000,
            0,
            0,
            AT,
            AT,
            Status.REFUSED,
            0,
            AT,
            new Refusal(CapName.PREVIEW_LIFETIME, "p1", "lifetime", 600_000, 200_000),
            Owner.LEDGER_API);
    RecentIds.Entry e = RecentIds.empty().with(refused, AT).find("r-1");
    assertEquals(CapName.PREVIEW_LIFETIME, e.refusedBy());
    assertTrue(e.refusedOnSubject());
    assertEquals(200_000, e.headroomMicros());
    assertEquals(Lane.TRIAL, e.lane());
  }

  @Test
  void expiryDropsWholeChunksOldestFirstAndNeverScansTheRest() {
    RecentIds index = RecentIds.empty();
    int n = RecentIds.CHUNK * 3 + 10;
    for (int i = 0; i < n; i++) {
      index = index.with(settled("id-" + i, null, 1, 1), AT.plusSeconds(i));
    }
    List<RecentIds.Chunk> expired = new ArrayList<>();
    // Everything closed before the second chunk's newest id: exactly one chunk goes.
    RecentIds after = index.expiredBefore(AT.plusSeconds(RecentIds.CHUNK * 2L - 1), expired::add);
    assertEquals(1, expired.size());
    assertEquals(n - RecentIds.CHUNK, after.size());
    assertNull(after.find("id-0"));
    assertEquals(Status.SETTLED, after.find("id-" + RecentIds.CHUNK).status());

    PastIds past = PastIds.NONE.withExpired(expired, index, index.size());
    assertTrue(past.mightContain("id-0"));
    assertTrue(past.mightContain("id-" + (RecentIds.CHUNK - 1)));
  }

  @Test
  void branchesFromOneIndexDoNotSeeEachOther() {
    RecentIds base = RecentIds.empty().with(settled("a", null, 1, 1), AT);
    RecentIds left = base.with(settled("left", null, 1, 1), AT);
    RecentIds right = base.with(settled("right", null, 1, 1), AT);
    assertNull(left.find("right"));
    assertNull(right.find("left"));
    assertEquals(Status.SETTLED, left.find("left").status());
    assertEquals(Status.SETTLED, right.find("right").status());
    assertEquals(Status.SETTLED, right.find("a").status());
  }

  @Test
  void onlyTheNewestValueOwnsTheTableAndABranchGetsItsOwn() {
    RecentIds base = RecentIds.empty().with(settled("a", null, 1, 1), AT);
    assertTrue(base.ownsTable());
    RecentIds next = base.with(settled("b", null, 1, 1), AT);
    assertTrue(next.ownsTable());
    assertFalse(base.ownsTable(), "the writer moved on: the older value gave the table up");
    RecentIds branch = base.with(settled("c", null, 1, 1), AT);
    assertTrue(branch.ownsTable());
    assertTrue(next.ownsTable(), "a branch copies the index instead of taking the writer's");
    assertNull(next.find("c"));
    assertNull(branch.find("b"));
    assertNull(base.find("b"));
    assertEquals(Status.SETTLED, next.find("b").status());
  }

  @Test
  void anOlderValueStillFindsItsIdsAfterTheWriterExpiredThem() {
    RecentIds index = RecentIds.empty();
    int n = RecentIds.CHUNK * 2 + 5;
    for (int i = 0; i < n; i++) {
      index = index.with(settled("id-" + i, null, 1, 1), AT.plusSeconds(i));
    }
    RecentIds older = index;
    RecentIds newer = older.expiredBefore(AT.plusSeconds(RecentIds.CHUNK), c -> {});
    assertNull(newer.find("id-0"));
    assertEquals(Status.SETTLED, older.find("id-0").status());
    assertEquals(Status.SETTLED, older.find("id-" + (RecentIds.CHUNK - 1)).status());
    assertEquals(n, older.size());
  }

  @Test
  void theSnapshotsCopyAnswersWhatItHeldWhileTheWriterGrowsAndExpiresTheTable() {
    RecentIds index = RecentIds.empty();
    int held = RecentIds.CHUNK + 100;
    for (int i = 0; i < held; i++) {
      index = index.with(settled("id-" + i, null, 1, 1), AT.plusSeconds(i));
    }
    RecentIds snapshot = index.withLastChunkCopied();
    assertFalse(snapshot.ownsTable(), "a copy read on another thread never reads the writer's");
    // The writer goes on: the table grows several times over and the oldest chunk expires.
    for (int i = held; i < held + RecentIds.CHUNK * 4; i++) {
      index = index.with(settled("id-" + i, null, 1, 1), AT.plusSeconds(i));
    }
    index = index.expiredBefore(AT.plusSeconds(RecentIds.CHUNK), c -> {});
    assertNull(index.find("id-0"));
    for (int i = 0; i < held; i++) {
      assertEquals(Status.SETTLED, snapshot.find("id-" + i).status(), "id-" + i);
    }
    assertNull(snapshot.find("id-" + held));
  }

  @Test
  void foldingTheSameFactAgainFromTheOlderValueKeepsBothAnswering() {
    RecentIds base = RecentIds.empty().with(settled("a", null, 1, 1), AT);
    RecentIds decided = base.with(settled("b", null, 1, 1), AT);
    RecentIds refolded = base.with(settled("b", null, 1, 1), AT);
    assertTrue(refolded.ownsTable());
    assertEquals(Status.SETTLED, refolded.find("b").status());
    assertEquals(Status.SETTLED, decided.find("b").status());
    assertEquals(Status.SETTLED, decided.find("a").status());
  }

  @Test
  void pastIdFiltersAnswerEveryMemberAndFewStrangers() {
    RecentIds index = RecentIds.empty();
    int n = RecentIds.CHUNK * 16;
    for (int i = 0; i < n; i++) {
      index = index.with(settled("old-" + i, null, 1, 1), AT);
    }
    List<RecentIds.Chunk> expired = new ArrayList<>();
    RecentIds source = index;
    index.expiredBefore(AT.plusSeconds(1), expired::add);
    PastIds past = PastIds.NONE.withExpired(expired, source, n);
    for (int i = 0; i < n; i++) {
      assertTrue(past.mightContain("old-" + i));
    }
    int strangers = 100_000;
    int hits = 0;
    for (int i = 0; i < strangers; i++) {
      hits += past.mightContain("new-" + i) ? 1 : 0;
    }
    double rate = (double) hits / strangers;
    System.out.printf(
        "past-id filter: %d ids, false positives %.3f%%, %d bytes%n",
        n, rate * 100, past.retainedBytes());
    assertTrue(rate < 0.02, "false-positive rate " + rate);
    assertFalse(past.withoutOlderThan(AT.plusSeconds(1)).mightContain("old-0"));
  }
}
