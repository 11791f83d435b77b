package dev.spendgateway.ledger.ops;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.Optional;

/**
 * The H2 file journal's lock: an OS lock on {@code <data-dir>/gateway.lock}, which also holds the
 * holder's pid, host and start time for the message a second gateway prints. The OS releases the
 * lock when the process ends, even on {@code kill -9}, so a crash never leaves a stale lock (the
 * file's text may stay; it is overwritten by the next holder and ignored while nobody locks it).
 */
public final class FileJournalLock implements JournalLock {
  /** The lock file's name inside the data dir. */
  public static final String FILE_NAME = "gateway.lock";

  private final Path dataDir;
  private final Clock clock;

  public FileJournalLock(Path dataDir) {
    this(dataDir, Clock.systemUTC());
  }

  FileJournalLock(Path dataDir, Clock clock) {
    this.dataDir = dataDir.toAbsolutePath();
    this.clock = clock;
  }

  @Override
  public Lease acquire() throws JournalInUseException {
    Path file = dataDir.resolve(FILE_NAME);
    FileChannel channel;
    try {
      Files.createDirectories(dataDir);
      channel =
          FileChannel.open(
              file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot open the lock file " + file + ": " + e.getMessage(), e);
    }
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException heldInThisJvm) {
      lock = null;
    } catch (IOException e) {
      close(channel);
      throw new UncheckedIOException("cannot lock " + file + ": " + e.getMessage(), e);
    }
    if (lock == null) {
      Optional<LockHolder> holder = read(file);
      close(channel);
      throw new JournalInUseException(dataDir, holder);
    }
    try {
      byte[] text =
          LockHolder.self(clock.instant()).toProperties().getBytes(StandardCharsets.UTF_8);
      channel.truncate(0);
      channel.write(ByteBuffer.wrap(text), 0);
      channel.force(true);
    } catch (IOException e) {
      close(channel);
      throw new UncheckedIOException(
          "cannot write the lock file " + file + ": " + e.getMessage(), e);
    }
    FileLock held = lock;
    return new Lease() {
      private boolean closed;

      @Override
      public synchronized void close() {
        if (closed) {
          return;
        }
        closed = true;
        try {
          channel.truncate(0);
          held.release();
        } catch (IOException ignored) {
          // the process is ending or the file is gone; the OS drops the lock with the channel
        }
        FileJournalLock.close(channel);
      }
    };
  }

  /**
   * The live gateway holding the lock on {@code dataDir}, if any — found without taking the lock,
   * for operator tools that must never hold it.
   */
  public static Optional<LockHolder> liveHolder(Path dataDir) {
    return read(dataDir.toAbsolutePath().resolve(FILE_NAME)).filter(LockHolder::isAliveHere);
  }

  private static Optional<LockHolder> read(Path file) {
    try {
      return LockHolder.parse(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static void close(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // nothing to do about a failed close of a lock file
    }
  }
}
