package dev.spendgateway.policy.access;

import java.security.SecureRandom;
import java.util.UUID;
import java.util.random.RandomGenerator;
import java.util.random.RandomGeneratorFactory;

/**
 * Fresh ids for the per-call hot path (request ids, the provider routes' reservation ids), in the
 * UUID form ({@code 8-4-4-4-12} hex, version 4, IETF variant) every consumer already reads.
 *
 * <p>{@link UUID#randomUUID()} draws from the JVM's one shared {@link SecureRandom}: a lock every
 * thread contends for and, with the default provider, a read of the OS's random device per call.
 * Here each thread has its own generator (L64X128MixRandom: 192 bits of state, 2^192 period),
 * seeded once from the system's {@code SecureRandom}. Ids therefore stay unique across threads,
 * restarts and nodes (each thread starts at an independent random point; two 122-bit random ids
 * colliding is as unlikely as with {@code randomUUID}), and cost a few nanoseconds.
 *
 * <p>They are not secrets: a request id is echoed to its caller, and a reservation id in the
 * provider routes' namespace is refused to every ledger API caller, so knowing one grants nothing.
 * They are hard enough to predict that nobody guesses another caller's id by chance.
 */
public final class RandomIds {
  private static final SecureRandom SEEDS = new SecureRandom();
  private static final RandomGeneratorFactory<RandomGenerator> FACTORY =
      RandomGeneratorFactory.of("L64X128MixRandom");
  private static final ThreadLocal<RandomGenerator> PER_THREAD =
      ThreadLocal.withInitial(RandomIds::seeded);

  private RandomIds() {}

  /** A fresh random id, e.g. {@code 3f2b9c1e-5d7a-4e0f-9b2c-8a1d6e4f7c3b}. */
  public static String uuid() {
    RandomGenerator random = PER_THREAD.get();
    long high = random.nextLong();
    long low = random.nextLong();
    // Version 4 (random) and the IETF variant, as UUID.randomUUID sets them.
    high = (high & ~0xF000L) | 0x4000L;
    low = (low & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
    return new UUID(high, low).toString();
  }

  private static RandomGenerator seeded() {
    byte[] seed = new byte[24];
    synchronized (SEEDS) {
      SEEDS.nextBytes(seed);
    }
    return FACTORY.create(seed);
  }
}
