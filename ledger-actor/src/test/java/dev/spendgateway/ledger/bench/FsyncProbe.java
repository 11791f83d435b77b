package dev.spendgateway.ledger.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * This machine's cost of making a write durable: append a block to a file in {@code dir} and {@link
 * FileChannel#force force} it, as H2 does for {@code CHECKPOINT SYNC} (a journal commit appends a
 * chunk, then the sync forces the file). Printed next to every durable benchmark, because a durable
 * commit can never be faster than this.
 */
public final class FsyncProbe {
  private FsyncProbe() {}

  /** Latencies in microseconds of {@code rounds} append+force(true) pairs of {@code blockBytes}. */
  public static Histogram appendAndForce(Path dir, int rounds, int blockBytes, boolean metadata)
      throws IOException {
    Path file = Files.createTempFile(dir, "fsync-probe", ".bin");
    Histogram micros = new Histogram(TimeUnit.SECONDS.toMicros(10), 3);
    ByteBuffer block = ByteBuffer.allocate(blockBytes);
    try (FileChannel channel =
        FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
      for (int i = 0; i < rounds; i++) {
        block.clear();
        block.putLong(0, i);
        long t0 = System.nanoTime();
        while (block.hasRemaining()) {
          channel.write(block);
        }
        channel.force(metadata);
        micros.recordValue(
            Math.min((System.nanoTime() - t0) / 1000, TimeUnit.SECONDS.toMicros(10)));
      }
    } finally {
      Files.deleteIfExists(file);
    }
    return micros;
  }

  /** One line: p50/p99/max in ms of append+fsync of a 4 KB block, 200 rounds, in {@code dir}. */
  public static String summary(Path dir) throws IOException {
    appendAndForce(dir, 20, 4096, true); // warm the file system's journal
    Histogram h = appendAndForce(dir, 200, 4096, true);
    return String.format(
        "fsync (4 KB append + force) in %s: p50 %.3f ms, p99 %.3f ms, max %.3f ms (%d rounds)",
        dir,
        h.getValueAtPercentile(50) / 1000.0,
        h.getValueAtPercentile(99) / 1000.0,
        h.getMaxValue() / 1000.0,
        h.getTotalCount());
  }

  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args.length > 0 ? args[0] : System.getProperty("java.io.tmpdir"));
    System.out.println(summary(dir));
    for (int size : new int[] {512, 4096, 65536, 1 << 20}) {
      for (boolean metadata : new boolean[] {true, false}) {
        Histogram h = appendAndForce(dir, 200, size, metadata);
        System.out.printf(
            "append %,d B + force(%s): p50 %.3f ms, p99 %.3f ms, mean %.3f ms%n",
            size,
            metadata,
            h.getValueAtPercentile(50) / 1000.0,
            h.getValueAtPercentile(99) / 1000.0,
            h.getMean() / 1000.0);
      }
    }
  }
}
