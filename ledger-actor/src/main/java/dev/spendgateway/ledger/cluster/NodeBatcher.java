package dev.spendgateway.ledger.cluster;

import dev.spendgateway.ledger.Decider;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import dev.spendgateway.ledger.LedgerProtocol.NodeAnswer;
import dev.spendgateway.ledger.LedgerProtocol.NodeAnswers;
import dev.spendgateway.ledger.LedgerProtocol.NodeBatch;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;

/**
 * This node's door to the cluster's one ledger: every command the node's ledger client sends
 * arrives here. Queries and operator commands go on to the singleton proxy. A reserve, settle or
 * void goes on to the proxy as it comes while the ledger runs on this node (no network to save),
 * and in batches while it runs on another: one remote message (a {@link NodeBatch}) for whatever
 * arrived while earlier batches were on their way, and one message back (a {@link NodeAnswers}),
 * instead of a message and a serialization each way per call. With at most {@code max-in-flight}
 * batches unanswered a lone call still leaves at once; under load the batches grow with the arrival
 * rate, as the ledger's own group commit does. While {@link LedgerGate} says the ledger is out of
 * reach (moving, recovering, its node lost), a reserve, settle or void is answered at once "busy,
 * retry after N s" (the edge's 503 with {@code retry-after}): nothing is decided for it, so no
 * provider is ever called without a durable reservation.
 *
 * <p>The gate's two flags are read here, not asked for: one actor between the caller and the proxy,
 * not two, since every hand-off between actors can wake a sleeping thread, and on a node sharing
 * its cores with others those wake-ups were a fifth of its CPU.
 *
 * <p>The callers wait here, each at its index in the batch it went with, and are answered from the
 * batch's answers. A batch not answered within {@code answer-timeout} (its message lost with the
 * ledger's node) is forgotten: its callers' own asks time out, as they would have without batching,
 * and its slot is free again. Commands not sent yet when the ledger goes out of reach are answered
 * busy at once: nothing was decided for them. What waits here is bounded by the calls this node
 * holds open ({@code gateway.max-open-calls}), each of which waits for at most one command.
 */
final class NodeBatcher extends AbstractBehavior<Object> {

  /** The batching limits ({@code gateway.cluster.node-batch.*}). */
  record Settings(int maxCommands, int maxInFlight, Duration answerTimeout, int retryAfterSeconds) {
    Settings {
      if (maxCommands < 1 || maxInFlight < 1) {
        throw new IllegalArgumentException(
            "gateway.cluster.node-batch.max-commands and max-in-flight must be at least 1");
      }
    }
  }

  /** The gate closed: the ledger is moving or its node is lost. */
  record LedgerOutOfReach() {}

  /**
   * What {@link LedgerGate} knows of the ledger, read at each command.
   *
   * @param reachable whether the ledger answers (false: writes are answered busy at once)
   * @param here whether it runs on this node (true: writes go on unbatched)
   */
  record Whereabouts(BooleanSupplier reachable, BooleanSupplier here) {}

  private record AnswerOverdue(long batch) {}

  private final ActorRef<GlobalBudget.Command> proxy;
  private final Settings settings;
  private final Whereabouts ledger;
  private final TimerScheduler<Object> timers;
  private final ActorRef<NodeAnswers> answersTo;

  /** Commands that arrived while {@code max-in-flight} batches were unanswered, oldest first. */
  private final ArrayDeque<Batchable> toSend = new ArrayDeque<>();

  /** The callers of each batch sent and not yet answered or given up, by batch number. */
  private final Map<Long, List<Batchable>> awaitingAnswers = new HashMap<>();

  /**
   * The batches counted against {@code max-in-flight}: those of {@link #awaitingAnswers} sent since
   * the ledger was last out of reach (older ones went to a ledger that is gone).
   */
  private final Set<Long> inFlight = new HashSet<>();

  private long batches;

  static Behavior<Object> create(
      ActorRef<GlobalBudget.Command> proxy, Settings settings, Whereabouts ledger) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> new NodeBatcher(context, timers, proxy, settings, ledger)));
  }

  private NodeBatcher(
      ActorContext<Object> context,
      TimerScheduler<Object> timers,
      ActorRef<GlobalBudget.Command> proxy,
      Settings settings,
      Whereabouts ledger) {
    super(context);
    this.timers = timers;
    this.proxy = proxy;
    this.settings = settings;
    this.ledger = ledger;
    this.answersTo = context.getSelf().narrow();
  }

  @Override
  public Receive<Object> createReceive() {
    return newReceiveBuilder()
        .onMessage(Batchable.class, this::onCommand)
        .onMessage(GlobalBudget.Command.class, this::onOther)
        .onMessage(NodeAnswers.class, this::onAnswers)
        .onMessage(AnswerOverdue.class, this::onOverdue)
        .onMessage(LedgerOutOfReach.class, this::onOutOfReach)
        .build();
  }

  private Behavior<Object> onCommand(Batchable command) {
    if (!ledger.reachable().getAsBoolean()) {
      GlobalBudget.send(command, busy(command));
    } else if (ledger.here().getAsBoolean()) {
      proxy.tell(command);
    } else {
      toSend.add(command);
      sendWhileRoom();
    }
    return this;
  }

  /** Queries and operator commands wait in the proxy's buffer (their asks may time out: 503). */
  private Behavior<Object> onOther(GlobalBudget.Command command) {
    proxy.tell(command);
    return this;
  }

  private LedgerProtocol.Busy busy(Batchable command) {
    return new LedgerProtocol.Busy(Decider.busy(command).id(), settings.retryAfterSeconds());
  }

  private Behavior<Object> onAnswers(NodeAnswers answers) {
    List<Batchable> callers = awaitingAnswers.remove(answers.batch());
    inFlight.remove(answers.batch());
    timers.cancel(answers.batch());
    if (callers != null) {
      // The ledger API's callers go on here (map the reply to a response), not one hand-off later.
      LedgerClient.answeringInline(
          () -> {
            for (NodeAnswer answer : answers.answers()) {
              GlobalBudget.send(callers.get(answer.index()), answer.reply());
            }
          });
    }
    sendWhileRoom();
    return this;
  }

  private Behavior<Object> onOverdue(AnswerOverdue overdue) {
    List<Batchable> callers = awaitingAnswers.remove(overdue.batch());
    inFlight.remove(overdue.batch());
    if (callers != null) {
      getContext()
          .getLog()
          .warn(
              "the ledger did not answer a batch of {} commands within {}; their callers' asks"
                  + " time out",
              callers.size(),
              settings.answerTimeout());
    }
    sendWhileRoom();
    return this;
  }

  /**
   * Nothing was decided for the commands not sent yet: busy, retry. Batches already sent keep
   * waiting for their answers (a ledger that was only slow still answers them), but no longer hold
   * a slot, so the first calls after the ledger moves leave at once.
   */
  private Behavior<Object> onOutOfReach(LedgerOutOfReach outOfReach) {
    for (Batchable command : toSend) {
      GlobalBudget.send(command, busy(command));
    }
    toSend.clear();
    inFlight.clear();
    return this;
  }

  private void sendWhileRoom() {
    while (!toSend.isEmpty() && inFlight.size() < settings.maxInFlight()) {
      int size = Math.min(toSend.size(), settings.maxCommands());
      List<Batchable> callers = new ArrayList<>(size);
      List<Batchable> commands = new ArrayList<>(size);
      for (int i = 0; i < size; i++) {
        Batchable command = toSend.poll();
        callers.add(command);
        commands.add(command.withoutReplyTo());
      }
      long batch = ++batches;
      awaitingAnswers.put(batch, callers);
      inFlight.add(batch);
      timers.startSingleTimer(batch, new AnswerOverdue(batch), settings.answerTimeout());
      proxy.tell(new NodeBatch(batch, commands, answersTo));
    }
  }
}
