package dev.spendgateway.ledger;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.journal.NewestSnapshotStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.persistence.SnapshotMetadata;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;
import scala.runtime.BoxedUnit;

/**
 * The ledger's snapshot store, with every save held until a test lets it go ({@link #release}): a
 * snapshot that takes as long as a test wants, like a large state on a slow disk.
 */
public class HeldSnapshotStore extends NewestSnapshotStore {
  private static volatile CountDownLatch gate = new CountDownLatch(0);
  private static final java.util.concurrent.atomic.AtomicInteger held =
      new java.util.concurrent.atomic.AtomicInteger();

  public HeldSnapshotStore(Config config) {
    super(config);
  }

  /** Holds every save from now on until {@link #release}. */
  public static void hold() {
    gate = new CountDownLatch(1);
    held.set(0);
  }

  public static void release() {
    gate.countDown();
  }

  /** How many saves have arrived and are held (or went through) since {@link #hold}. */
  public static int held() {
    return held.get();
  }

  @Override
  public Future<BoxedUnit> saveAsync(SnapshotMetadata metadata, Object snapshot) {
    CountDownLatch waitFor = gate;
    held.incrementAndGet();
    return FutureConverters.asScala(
        CompletableFuture.runAsync(
                () -> {
                  try {
                    waitFor.await(60, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                })
            .thenCompose(v -> FutureConverters.asJava(super.saveAsync(metadata, snapshot))));
  }
}
