package dev.spendgateway.ledger.ops;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Instant;
import java.util.Optional;
import java.util.Properties;

/**
 * Who holds a journal lock: written into the lock file by the holder, read by whoever is refused.
 *
 * @param pid the holder's process id
 * @param host the holder's host name
 * @param since when it took the lock
 */
public record LockHolder(long pid, String host, Instant since) {

  /** This process, now. */
  static LockHolder self(Instant now) {
    return new LockHolder(ProcessHandle.current().pid(), localHost(), now);
  }

  /** {@code pid N on HOST, since INSTANT}, as refusals name the holder. */
  public String describe() {
    return "pid " + pid + " on " + host + ", since " + since;
  }

  String toProperties() {
    return "pid=" + pid + "\nhost=" + host + "\nsince=" + since + "\n";
  }

  /** The holder a lock file names; empty when it names none (released, or being written). */
  static Optional<LockHolder> parse(String text) {
    Properties p = new Properties();
    try {
      p.load(new java.io.StringReader(text));
      if (p.getProperty("pid") == null) {
        return Optional.empty();
      }
      return Optional.of(
          new LockHolder(
              Long.parseLong(p.getProperty("pid").trim()),
              p.getProperty("host", "?").trim(),
              Instant.parse(p.getProperty("since", Instant.EPOCH.toString()).trim())));
    } catch (java.io.IOException | RuntimeException malformed) {
      return Optional.empty();
    }
  }

  /**
   * Whether the holder is a live process on this host (a lock file left by a killed one is not).
   */
  boolean isAliveHere() {
    return host.equals(localHost())
        && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  static String localHost() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return Optional.ofNullable(System.getenv("HOSTNAME")).orElse("localhost");
    }
  }
}
