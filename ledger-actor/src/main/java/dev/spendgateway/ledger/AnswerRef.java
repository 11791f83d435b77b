package dev.spendgateway.ledger;

import java.util.function.Consumer;
import org.apache.pekko.actor.ActorPath;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorRefProvider;
import org.apache.pekko.actor.InternalActorRef;
import org.apache.pekko.actor.LocalRef;
import org.apache.pekko.actor.Nobody$;
import org.apache.pekko.dispatch.sysmsg.SystemMessage;
import scala.collection.Iterator;

/**
 * Where the ledger's one answer to one ask goes, without an actor: the first message told to it is
 * handed to {@code onAnswer} on the telling thread, later ones are dropped.
 *
 * <p>Why not Pekko's ask: each ask builds a temporary actor (a promise ref registered under a
 * temporary path, then unregistered), a Scala promise and its conversion to a Java stage, only to
 * carry one reply to a {@code CompletableFuture}. This ref carries it there directly; the client
 * still keeps its own timeout and still hands the answer to the dispatcher.
 *
 * <p>It is not registered anywhere, so a reply that had to travel from another process could not
 * find it: {@link LedgerClient} uses it only for a ledger in its own process (not in cluster mode).
 * Its path is a fresh temporary path, so two refs are never equal.
 */
final class AnswerRef extends InternalActorRef implements LocalRef {
  private final ActorRefProvider provider;
  private final ActorPath path;
  private final Consumer<Object> onAnswer;
  private volatile boolean answered;

  AnswerRef(ActorRefProvider provider, Consumer<Object> onAnswer) {
    this.provider = provider;
    this.path = provider.tempPath();
    this.onAnswer = onAnswer;
  }

  @Override
  public void $bang(Object message, ActorRef sender) {
    if (!answered) {
      answered = true; // one ledger answers each command once; a stray second reply is dropped
      onAnswer.accept(message);
    }
  }

  @Override
  public ActorPath path() {
    return path;
  }

  @Override
  public ActorRefProvider provider() {
    return provider;
  }

  @Override
  public boolean isLocal() {
    return true;
  }

  @Override
  public boolean isTerminated() {
    return answered;
  }

  @Override
  public InternalActorRef getParent() {
    return Nobody$.MODULE$;
  }

  @Override
  public InternalActorRef getChild(Iterator<String> names) {
    return Nobody$.MODULE$;
  }

  @Override
  public void sendSystemMessage(SystemMessage message) {}

  @Override
  public void start() {}

  @Override
  public void resume(Throwable causedByFailure) {}

  @Override
  public void suspend() {}

  @Override
  public void restart(Throwable cause) {}

  @Override
  public void stop() {}
}
