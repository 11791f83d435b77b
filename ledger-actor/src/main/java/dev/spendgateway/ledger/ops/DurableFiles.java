package dev.spendgateway.ledger.ops;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Files the operator tools write that must survive a power cut once the tool said it wrote them: a
 * restored journal (a gateway started on it next serves those books), a backup, an export. A closed
 * file is only in the page cache, and a rename only in the directory's: without a flush of both, a
 * power cut can leave an empty or missing file behind an "OK", and a gateway started on a data dir
 * whose restored journal vanished would start empty books.
 */
public final class DurableFiles {
  private DurableFiles() {}

  /** Flushes {@code file}'s bytes to the disk. */
  public static void force(Path file) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
  }

  /**
   * Flushes {@code dir}'s entries (a file created or renamed in it) to the disk. Linux and macOS
   * open a directory for reading and force it; a platform that cannot open one (Windows) keeps its
   * entries with the file's own flush, so nothing is left to do there.
   */
  public static void forceDirectory(Path dir) throws IOException {
    FileChannel channel;
    try {
      channel = FileChannel.open(dir, StandardOpenOption.READ);
    } catch (IOException cannotOpenDirectory) {
      return;
    }
    try (channel) {
      channel.force(true);
    }
  }

  /**
   * Moves a complete {@code partial} over {@code target} so that a power cut leaves either the old
   * target or the whole new one: the bytes are flushed before the rename, the rename after it.
   */
  public static void moveIntoPlace(Path partial, Path target) throws IOException {
    force(partial);
    Files.move(
        partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    forceDirectory(target.toAbsolutePath().getParent());
  }
}
