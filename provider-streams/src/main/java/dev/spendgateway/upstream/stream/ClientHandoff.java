package dev.spendgateway.upstream.stream;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.util.ByteString;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import scala.concurrent.ExecutionContext;

/**
 * The client's end of an already running meter: a publisher for exactly one subscriber, who must
 * come within the client subscribe timeout.
 *
 * <p>The meter runs before anyone reads it, so the count no longer depends on the web server ever
 * starting the response. If the response is never started (the caller hung up before the headers),
 * nobody subscribes: when the timeout passes, the handoff subscribes a subscriber that cancels at
 * once, which the usage tap reads as "the client left" and drains. Whoever takes the handoff first
 * wins; a subscriber that comes later, or a second one, gets {@link ClientGone}.
 *
 * <p>{@link #clientDone()} completes when the client's side is over: read to its end, failed,
 * cancelled, or given up. The meter's outcome waits for it, so a settle never overtakes the
 * delivery of the answer it bills (the handoff reads a few chunks ahead of the client).
 */
final class ClientHandoff implements Publisher<ByteString> {

  private final Publisher<ByteString> meterOutput;
  private final AtomicBoolean taken = new AtomicBoolean();
  private final CompletableFuture<Done> clientDone = new CompletableFuture<>();
  private volatile Cancellable giveUpTimer = Cancellable.alreadyCancelled();

  private ClientHandoff(Publisher<ByteString> meterOutput) {
    this.meterOutput = meterOutput;
  }

  /**
   * @param meterOutput the running meter's output (a one-subscriber publisher whose own Pekko
   *     subscription timeout is off: this class owns that decision)
   * @param subscribeTimeout {@code providers.client-subscribe-timeout}
   */
  static ClientHandoff awaitClient(
      Publisher<ByteString> meterOutput,
      Duration subscribeTimeout,
      Scheduler scheduler,
      ExecutionContext ec) {
    ClientHandoff handoff = new ClientHandoff(meterOutput);
    // Nobody can subscribe before this method returns, so the timer is in place before any client.
    try {
      handoff.giveUpTimer = scheduler.scheduleOnce(subscribeTimeout, handoff::clientNeverCame, ec);
    } catch (IllegalStateException schedulerStopped) {
      handoff.clientNeverCame(); // the actor system is stopping: no response will be sent now
    }
    return handoff;
  }

  /** Completes (never exceptionally) once the client's side of the stream is over. */
  CompletionStage<Done> clientDone() {
    return clientDone;
  }

  @Override
  public void subscribe(Subscriber<? super ByteString> subscriber) {
    if (taken.compareAndSet(false, true)) {
      giveUpTimer.cancel();
      meterOutput.subscribe(subscriber);
    } else {
      subscriber.onSubscribe(NoSubscription.INSTANCE);
      subscriber.onError(new ClientGone());
    }
  }

  /** The subscribe timeout passed: unless the client came after all, it is gone. */
  private void clientNeverCame() {
    if (taken.compareAndSet(false, true)) {
      meterOutput.subscribe(new CancelAtOnce());
      clientEnded();
    }
  }

  /**
   * The client's side is over. Called by the client's own stream when it stops (see {@link
   * StreamMeter}), or here when the client never came; only the first call counts.
   */
  void clientEnded() {
    clientDone.complete(Done.getInstance());
  }

  /** A client that reads nothing: the usage tap sees a cancelled client and drains. */
  private static final class CancelAtOnce implements Subscriber<ByteString> {
    @Override
    public void onSubscribe(Subscription subscription) {
      subscription.cancel();
    }

    @Override
    public void onNext(ByteString chunk) {}

    @Override
    public void onError(Throwable error) {}

    @Override
    public void onComplete() {}
  }

  /** The subscription handed to a refused subscriber before its error. */
  private enum NoSubscription implements Subscription {
    INSTANCE;

    @Override
    public void request(long n) {}

    @Override
    public void cancel() {}
  }

  /**
   * The stream was already given to another reader, or given up because no reader came within the
   * client subscribe timeout. Carries no answer bytes.
   */
  static final class ClientGone extends IllegalStateException {
    ClientGone() {
      super(
          "the metered stream has no reader slot left (taken, or the client subscribe timeout passed)");
    }
  }
}
