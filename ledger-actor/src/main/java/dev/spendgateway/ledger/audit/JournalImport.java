package dev.spendgateway.ledger.audit;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;

/**
 * Writes exported events into an empty journal under the ledger's persistence id, through the same
 * journal plugin the ledger writes with: the way an H2 journal moves to PostgreSQL ({@code
 * gateway-admin export}, then {@code import}). One row per original row (the facts of one group
 * commit together), so the sequence numbers are the export's. The state is only the number of rows
 * written; the ledger itself is never started here.
 */
public final class JournalImport extends EventSourcedBehavior<JournalImport.Command, Event, Long> {

  public sealed interface Command {}

  /** After recovery: how many rows the journal already holds (an import needs 0). */
  public record RowsPresent(ActorRef<Long> replyTo) implements Command {}

  /**
   * Persist {@code facts} as the row {@code sequenceNr}; answered with the sequence number written.
   */
  public record WriteRow(long sequenceNr, List<Event> facts, ActorRef<Long> replyTo)
      implements Command {}

  public static Behavior<Command> create() {
    return new JournalImport();
  }

  private JournalImport() {
    super(GlobalBudget.PERSISTENCE_ID);
  }

  @Override
  public Long emptyState() {
    return 0L;
  }

  @Override
  public CommandHandler<Command, Event, Long> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(
            RowsPresent.class, (rows, cmd) -> Effect().none().thenReply(cmd.replyTo(), r -> r))
        .onCommand(
            WriteRow.class,
            (rows, cmd) -> {
              if (cmd.sequenceNr() != rows + 1) {
                throw new IllegalStateException(
                    "export rows out of order: row "
                        + cmd.sequenceNr()
                        + " after row "
                        + rows
                        + " (import an export that starts at sequence number 1, without gaps)");
              }
              return Effect().persist(GroupCommit.of(cmd.facts())).thenReply(cmd.replyTo(), r -> r);
            })
        .build();
  }

  @Override
  public EventHandler<Long, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent((rows, event) -> rows + 1);
  }
}
