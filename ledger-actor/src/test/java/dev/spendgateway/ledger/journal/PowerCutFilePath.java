package dev.spendgateway.ledger.journal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.h2.store.fs.FilePath;
import org.h2.store.fs.FilePathWrapper;

/**
 * {@code powercut:} — an H2 file system that remembers what a power cut would leave. H2 reads and
 * writes the real file as usual; in addition, for each database file ({@code *.mv.db}) a {@link
 * DiskImage} keeps the bytes as of the last {@code FileChannel.force}: writes since then are
 * pending and would be gone if the power failed now. {@link DiskImage#copyTo} writes that surviving
 * file elsewhere, where a fresh ledger can recover from it.
 *
 * <p>The model is the kindest power cut (every unforced write lost, none torn or reordered); a real
 * disk may keep some unforced writes, never lose a forced one, so what this test requires —
 * everything acknowledged is in the image — holds for real disks too.
 */
public final class PowerCutFilePath extends FilePathWrapper {
  public static final String SCHEME = "powercut";
  private static final Map<String, DiskImage> IMAGES = new ConcurrentHashMap<>();

  /** Registers the scheme with H2 (idempotent). */
  public static void register() {
    FilePath.register(new PowerCutFilePath());
  }

  /** The image of the database file at {@code path} (absolute path of the {@code .mv.db} file). */
  public static DiskImage image(Path mvDbFile) {
    DiskImage image = IMAGES.get(mvDbFile.toAbsolutePath().toString());
    if (image == null) {
      throw new IllegalStateException("H2 never opened " + mvDbFile + " through " + SCHEME + ":");
    }
    return image;
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public FileChannel open(String mode) throws IOException {
    FileChannel real = getBase().open(mode);
    String name = getBase().toString();
    if (!mode.contains("w") || !name.endsWith(".mv.db")) {
      return real;
    }
    Path file = Path.of(name).toAbsolutePath();
    DiskImage image = IMAGES.computeIfAbsent(file.toString(), f -> DiskImage.of(file));
    return new PowerCutChannel(real, image);
  }

  /** The bytes a power cut would leave of one file, and the forces that put them there. */
  public static final class DiskImage {
    private final Path durable; // the surviving bytes, kept in a side file
    private List<Runnable> pending = new ArrayList<>(); // writes since the last force, in order
    private long forcesStarted;
    private long lastForceFinished; // the start number of the latest force that finished

    private DiskImage(Path durable) {
      this.durable = durable;
    }

    /** What was on disk when the file was first opened is durable. */
    static DiskImage of(Path file) {
      try {
        Path side = Files.createTempFile("powercut-", ".img");
        side.toFile().deleteOnExit(); // scratch: the test copies what it needs out of it
        if (Files.exists(file)) {
          Files.copy(file, side, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        return new DiskImage(side);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** Number of forces begun so far. */
    public synchronized long forcesStarted() {
      return forcesStarted;
    }

    /** The start number of the latest force that has finished (0: none yet). */
    public synchronized long lastForceFinished() {
      return lastForceFinished;
    }

    /** Writes what a power cut now would leave of the file to {@code target}. */
    public synchronized void copyTo(Path target) throws IOException {
      Files.copy(durable, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    synchronized void written(long position, byte[] bytes) {
      pending.add(() -> apply(channel -> channel.write(ByteBuffer.wrap(bytes), position)));
    }

    synchronized void truncated(long size) {
      pending.add(() -> apply(channel -> channel.truncate(size)));
    }

    /** Takes the writes a force about to start will cover (those made before it). */
    synchronized Force forceStarting() {
      List<Runnable> covered = pending;
      pending = new ArrayList<>();
      return new Force(++forcesStarted, covered);
    }

    /**
     * The force returned: its writes are on disk. Applied in start order (H2 does not force
     * concurrently).
     */
    synchronized void forceFinished(Force force) {
      force.covered.forEach(Runnable::run);
      lastForceFinished = Math.max(lastForceFinished, force.number);
    }

    private void apply(ChannelOp op) {
      try (FileChannel channel = FileChannel.open(durable, StandardOpenOption.WRITE)) {
        op.run(channel);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    record Force(long number, List<Runnable> covered) {}

    private interface ChannelOp {
      void run(FileChannel channel) throws IOException;
    }
  }

  /** The real channel, telling the image about every write, truncation and force. */
  private static final class PowerCutChannel extends FileChannel {
    private final FileChannel real;
    private final DiskImage image;

    PowerCutChannel(FileChannel real, DiskImage image) {
      this.real = real;
      this.image = image;
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
      ByteBuffer copy = src.duplicate();
      int n = real.write(src, position);
      record(copy, n, position);
      return n;
    }

    @Override
    public synchronized int write(ByteBuffer src) throws IOException {
      long position = real.position();
      ByteBuffer copy = src.duplicate();
      int n = real.write(src);
      record(copy, n, position);
      return n;
    }

    private void record(ByteBuffer copy, int n, long position) {
      if (n > 0) {
        byte[] bytes = new byte[n];
        copy.get(bytes);
        image.written(position, bytes);
      }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
      long total = 0;
      for (int i = offset; i < offset + length; i++) {
        total += write(srcs[i]);
      }
      return total;
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
      real.truncate(size);
      image.truncated(size);
      return this;
    }

    @Override
    public void force(boolean metaData) throws IOException {
      DiskImage.Force force = image.forceStarting();
      real.force(metaData);
      image.forceFinished(force);
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
      return real.read(dst);
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
      return real.read(dsts, offset, length);
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      return real.read(dst, position);
    }

    @Override
    public long position() throws IOException {
      return real.position();
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
      real.position(newPosition);
      return this;
    }

    @Override
    public long size() throws IOException {
      return real.size();
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target)
        throws IOException {
      return real.transferTo(position, count, target);
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) {
      throw new UnsupportedOperationException("H2 does not transfer into its store");
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) {
      throw new UnsupportedOperationException("H2's default store does not map its file");
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) throws IOException {
      return real.lock(position, size, shared);
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) throws IOException {
      return real.tryLock(position, size, shared);
    }

    @Override
    protected void implCloseChannel() throws IOException {
      real.close();
    }
  }
}
