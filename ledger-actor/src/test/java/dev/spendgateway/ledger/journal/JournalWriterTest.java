package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The journal writer on its own, with a scripted insert and flush: when a commit is confirmed
 * (after its flush, at commit when the ledger waits for the flush itself, at commit when the
 * database's commit is the flush), and how the fence refuses and closes.
 */
class JournalWriterTest {
  private final List<CompletableFuture<Void>> flushes = new ArrayList<>();

  private CompletionStage<?> flush() {
    CompletableFuture<Void> f = new CompletableFuture<>();
    flushes.add(f);
    return f;
  }

  @ParameterizedTest(name = "own flush: {0}, pipelined: {1}")
  @CsvSource({
    // the embedded H2 journal: confirmed only once a flush covered the write
    "true, false, false, false",
    // H2 with the pipeline: confirmed at commit; the ledger's answers wait for afterCommit()
    "true, true, true, true",
    // PostgreSQL: the commit is the flush
    "false, false, true, false"
  })
  void aCommitIsConfirmedWhenItIsDurableOrTheLedgerWaitsForTheFlush(
      boolean ownFlush, boolean pipelined, boolean confirmedAtCommit, boolean answersWaitForFlush) {
    JournalWriter writer = new JournalWriter();
    if (ownFlush) {
      writer.flushWith(this::flush, pipelined);
    }
    CompletableFuture<String> insert = new CompletableFuture<>();
    CompletableFuture<String> confirmed = writer.commit(() -> insert).toCompletableFuture();
    assertFalse(confirmed.isDone(), "nothing is confirmed before its commit");
    insert.complete("rows");

    assertEquals(confirmedAtCommit, confirmed.isDone());
    assertEquals(answersWaitForFlush, writer.answersWaitForFlush());
    if (!confirmedAtCommit) {
      assertEquals(1, flushes.size(), "the commit started one flush");
      flushes.get(0).complete(null);
      assertTrue(confirmed.isDone() && !confirmed.isCompletedExceptionally());
      assertEquals(1, writer.stats().syncedWrites());
    }
  }

  @Test
  void aPipelinedAnswerWaitsForAFlushThatStartedAfterItsCommit() {
    JournalWriter writer = new JournalWriter();
    writer.flushWith(this::flush, true);
    writer.commit(() -> CompletableFuture.completedFuture("rows"));
    CompletableFuture<Void> flushed = writer.afterCommit().toCompletableFuture();
    assertFalse(flushed.isDone());
    flushes.get(0).complete(null);
    assertTrue(flushed.isDone());
  }

  @Test
  void onlyTheWriteAnnouncedAsUnflushedIsConfirmedAtItsCommitAndTheNextFlushCoversIt() {
    JournalWriter writer = new JournalWriter();
    writer.flushWith(this::flush, false);
    writer.nextWriteWithoutFlush(7);

    // Another sequence number (a write that took the number after a restart) waits for its flush.
    CompletableFuture<String> other =
        writer.commit(() -> CompletableFuture.completedFuture("rows"), 6).toCompletableFuture();
    assertFalse(other.isDone());
    flushes.get(0).complete(null);
    assertTrue(other.isDone());

    CompletableFuture<String> announced =
        writer.commit(() -> CompletableFuture.completedFuture("rows"), 7).toCompletableFuture();
    assertTrue(announced.isDone(), "confirmed at its commit");
    writer.committedWithoutFlush();
    assertEquals(1, flushes.size(), "no flush of its own");
    assertEquals(2, writer.stats().writes());
    assertEquals(1, writer.stats().syncedWrites());

    // Taken once: the same number again (a retried write) waits for its flush, which covers both.
    CompletableFuture<String> again =
        writer.commit(() -> CompletableFuture.completedFuture("rows"), 7).toCompletableFuture();
    assertFalse(again.isDone());
    flushes.get(1).complete(null);
    assertTrue(again.isDone());
    assertEquals(3, writer.stats().syncedWrites());

    // Forgotten after a restart: the announced number waits for its flush.
    writer.nextWriteWithoutFlush(8);
    writer.noWriteWithoutFlush();
    assertFalse(
        writer
            .commit(() -> CompletableFuture.completedFuture("rows"), 8)
            .toCompletableFuture()
            .isDone());
  }

  @Test
  void aFlushOfCommittedWritesCountsNoWriteOfItsOwn() {
    JournalWriter writer = new JournalWriter();
    writer.flushWith(this::flush, false);
    writer.nextWriteWithoutFlush(1);
    writer.commit(() -> CompletableFuture.completedFuture("rows"), 1);
    writer.committedWithoutFlush();
    CompletableFuture<Void> flushed = writer.flushCommitted().toCompletableFuture();
    assertFalse(flushed.isDone());
    flushes.get(0).complete(null);
    assertTrue(flushed.isDone());
    assertEquals(1, writer.stats().writes());
    assertEquals(1, writer.stats().syncedWrites());
  }

  @Test
  void aWriteAnotherWriterBeatClosesTheFenceAndEveryLaterWriteIsRefusedUntilReopened() {
    JournalWriter writer = new JournalWriter();
    List<String> told = new ArrayList<>();
    writer.fence().onClosed(told::add);
    SQLException duplicate = new SQLException("duplicate key", JournalFence.UNIQUE_VIOLATION);

    CompletableFuture<String> first =
        writer
            .commit(() -> CompletableFuture.<String>failedFuture(duplicate))
            .toCompletableFuture();
    assertTrue(first.isCompletedExceptionally());
    assertTrue(writer.fence().isClosed());
    assertEquals(1, told.size());

    AtomicInteger inserts = new AtomicInteger();
    CompletableFuture<String> refused =
        writer
            .commit(
                () -> {
                  inserts.incrementAndGet();
                  return CompletableFuture.completedFuture("rows");
                })
            .toCompletableFuture();
    assertTrue(refused.isCompletedExceptionally());
    assertEquals(0, inserts.get(), "a fenced writer does not even try the insert");

    writer.fence().reopen();
    assertEquals(
        "rows",
        writer
            .commit(() -> CompletableFuture.completedFuture("rows"))
            .toCompletableFuture()
            .join());
  }

  @Test
  void anyOtherFailedWriteLeavesTheFenceOpen() {
    JournalWriter writer = new JournalWriter();
    writer.commit(
        () -> CompletableFuture.<String>failedFuture(new SQLException("disk full", "58030")));
    assertFalse(writer.fence().isClosed());
  }
}
