package dev.spendgateway.loadtest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A lean HTTP/1.1 client for a burst of streamed calls: one thread and one selector for every
 * connection, the request written as ready-made bytes, the answer read only as far as needed to
 * tell its status, its lines and its end.
 *
 * <p>Why not the JDK's {@code HttpClient}: on a 2-core box the load generator shares the CPU with
 * what it measures, and the JDK client spends more per new connection than the simulator it calls.
 * Measured in one sitting with a burst of 400: first content straight from the simulator p50 1.2 s
 * with the JDK client against 0.3–0.5 s with a bare non-blocking client, and through the gateway
 * 6.0 s against 1.3–2.3 s. The bench then timed its own client more than either target.
 */
final class SseBurstClient implements AutoCloseable {

  /** What one call learns, called on the client's thread (keep it short). */
  interface Listener {
    /** The answer's status code, once its status line is in. */
    void status(int code);

    /** One line of the answer's body (SSE framing included, line end stripped). */
    void line(String line);

    /**
     * The call is over: {@code problem} is null when the body ended as its framing said, else
     * {@code cut} (closed early) or {@code error:<exception class>} (refused, reset, timed out).
     */
    void end(String problem);
  }

  private final Selector selector;
  private final Queue<Exchange> toOpen = new ConcurrentLinkedQueue<>();
  private final Thread loop;
  private volatile boolean closing;

  SseBurstClient() throws IOException {
    this.selector = Selector.open();
    this.loop = new Thread(this::run, "sse-burst-client");
    this.loop.setDaemon(true);
    this.loop.start();
  }

  /**
   * The request's bytes: a POST of {@code body} to {@code target} with {@code headers}, asking the
   * server to close the connection after the answer (each call of a burst is a new caller).
   */
  static byte[] post(URI target, Map<String, String> headers, String body) {
    byte[] content = body.getBytes(StandardCharsets.UTF_8);
    StringBuilder head = new StringBuilder(256);
    head.append("POST ").append(target.getRawPath()).append(" HTTP/1.1\r\n");
    head.append("host: ").append(target.getHost()).append(':').append(target.getPort());
    head.append("\r\n");
    headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
    head.append("content-length: ").append(content.length).append("\r\n");
    head.append("connection: close\r\n\r\n");
    byte[] h = head.toString().getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[h.length + content.length];
    System.arraycopy(h, 0, out, 0, h.length);
    System.arraycopy(content, 0, out, h.length, content.length);
    return out;
  }

  /** Opens a connection to {@code to} and sends {@code request} on it; thread-safe. */
  void send(InetSocketAddress to, byte[] request, Listener listener) {
    toOpen.add(new Exchange(to, ByteBuffer.wrap(request), listener));
    selector.wakeup();
  }

  /** Ends every call still open with {@code error:closed} and stops the thread. */
  @Override
  public void close() throws IOException {
    closing = true;
    selector.wakeup();
    try {
      loop.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    ByteBuffer buffer = ByteBuffer.allocateDirect(64 * 1024);
    try (selector) {
      while (!closing) {
        selector.select(500);
        for (Exchange e; (e = toOpen.poll()) != null; ) {
          e.open(selector);
        }
        for (SelectionKey key : selector.selectedKeys()) {
          ((Exchange) key.attachment()).ready(key, buffer);
        }
        selector.selectedKeys().clear();
      }
      for (SelectionKey key : new ArrayList<>(selector.keys())) {
        ((Exchange) key.attachment()).fail("error:closed");
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("loadtest burst: the client's selector failed: " + e);
    }
  }

  /** One call: its socket, the request still to write, and the answer's parse state. */
  private static final class Exchange {
    private enum Part {
      HEAD,
      CHUNK_SIZE,
      CHUNK_DATA,
      CHUNK_END,
      TRAILER,
      SIZED,
      TO_CLOSE,
      DONE
    }

    private final InetSocketAddress to;
    private final ByteBuffer request;
    private final Listener listener;

    /** The head's and the chunk framing's line so far. */
    private final ByteArrayOutputStream frame = new ByteArrayOutputStream(128);

    /** The body's line so far: a chunk may end in the middle of one. */
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(512);

    private SocketChannel channel;
    private Part part = Part.HEAD;
    private boolean statusSeen;
    private boolean chunked;
    private long contentLength = -1;
    private long left;
    private boolean ended;

    Exchange(InetSocketAddress to, ByteBuffer request, Listener listener) {
      this.to = to;
      this.request = request;
      this.listener = listener;
    }

    void open(Selector selector) {
      try {
        channel = SocketChannel.open();
        channel.configureBlocking(false);
        channel.register(
            selector, channel.connect(to) ? SelectionKey.OP_WRITE : SelectionKey.OP_CONNECT, this);
      } catch (IOException e) {
        fail("error:" + e.getClass().getSimpleName());
      }
    }

    void ready(SelectionKey key, ByteBuffer buffer) {
      try {
        if (key.isValid() && key.isConnectable() && channel.finishConnect()) {
          key.interestOps(SelectionKey.OP_WRITE);
        }
        if (key.isValid() && key.isWritable()) {
          channel.write(request);
          if (!request.hasRemaining()) {
            key.interestOps(SelectionKey.OP_READ);
          }
        }
        if (key.isValid() && key.isReadable()) {
          read(buffer);
        }
      } catch (IOException | RuntimeException e) {
        fail("error:" + e.getClass().getSimpleName());
      }
    }

    private void read(ByteBuffer buffer) throws IOException {
      buffer.clear();
      int n = channel.read(buffer);
      if (n < 0) {
        if (part == Part.TO_CLOSE) {
          flushLine();
          finish(null);
        } else {
          finish("cut");
        }
        return;
      }
      buffer.flip();
      while (buffer.hasRemaining() && part != Part.DONE) {
        take(buffer.get());
      }
      if (part == Part.DONE) {
        finish(null);
      }
    }

    /** One byte of the answer, through the head, the chunk framing and the body's lines. */
    private void take(byte b) {
      switch (part) {
        case HEAD -> {
          if (b == '\n') {
            headLine(text(frame));
          } else {
            frame.write(b);
          }
        }
        case CHUNK_SIZE -> {
          if (b == '\n') {
            String size = text(frame);
            int ext = size.indexOf(';');
            left = Long.parseLong((ext >= 0 ? size.substring(0, ext) : size).trim(), 16);
            part = left == 0 ? Part.TRAILER : Part.CHUNK_DATA;
          } else {
            frame.write(b);
          }
        }
        case CHUNK_DATA -> {
          body(b);
          if (--left == 0) {
            part = Part.CHUNK_END;
          }
        }
        case CHUNK_END -> {
          if (b == '\n') {
            part = Part.CHUNK_SIZE;
          }
        }
        case TRAILER -> {
          if (b == '\n') {
            if (text(frame).isEmpty()) {
              flushLine();
              part = Part.DONE;
            }
          } else {
            frame.write(b);
          }
        }
        case SIZED -> {
          body(b);
          if (--left == 0) {
            flushLine();
            part = Part.DONE;
          }
        }
        case TO_CLOSE -> body(b);
        case DONE -> {}
      }
    }

    private void headLine(String text) {
      if (!statusSeen) {
        statusSeen = true;
        String[] words = text.split(" ", 3);
        listener.status(words.length > 1 ? Integer.parseInt(words[1]) : 0);
      } else if (text.isEmpty()) {
        if (chunked) {
          part = Part.CHUNK_SIZE;
        } else if (contentLength >= 0) {
          left = contentLength;
          part = left == 0 ? Part.DONE : Part.SIZED;
        } else {
          part = Part.TO_CLOSE;
        }
      } else {
        int colon = text.indexOf(':');
        if (colon > 0) {
          String name = text.substring(0, colon).trim().toLowerCase(Locale.ROOT);
          String value = text.substring(colon + 1).trim();
          if (name.equals("transfer-encoding")) {
            chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
          } else if (name.equals("content-length")) {
            contentLength = Long.parseLong(value);
          }
        }
      }
    }

    private void body(byte b) {
      if (b == '\n') {
        listener.line(text(line));
      } else {
        line.write(b);
      }
    }

    private void flushLine() {
      if (line.size() > 0) {
        listener.line(text(line));
      }
    }

    /** The bytes gathered in {@code from} as one line, without its carriage return; clears it. */
    private static String text(ByteArrayOutputStream from) {
      String text = from.toString(StandardCharsets.UTF_8);
      from.reset();
      return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
    }

    void fail(String problem) {
      finish(problem);
    }

    private void finish(String problem) {
      if (ended) {
        return;
      }
      ended = true;
      part = Part.DONE;
      try {
        if (channel != null) {
          channel.close();
        }
      } catch (IOException ignored) {
        // closing a socket we are done with: nothing left to tell
      }
      listener.end(problem);
    }
  }
}
