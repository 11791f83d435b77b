package dev.spendgateway.upstream;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A provider stand-in on 127.0.0.1 speaking plain HTTP/1.1 over a socket, so a test sees what a
 * high-level server hides: how many TCP connections the gateway opened, and answers whose headers
 * come late or whose stream drips. Every request gets the current {@link Script}.
 */
public final class RawUpstream implements AutoCloseable {

  /**
   * How the next answers behave.
   *
   * @param headerDelay silence before the status line
   * @param events SSE events to send (0: a small JSON answer with a Content-Length)
   * @param eventInterval silence before each event
   */
  public record Script(Duration headerDelay, int events, Duration eventInterval) {
    public static Script json() {
      return new Script(Duration.ZERO, 0, Duration.ZERO);
    }

    public static Script jsonAfter(Duration headerDelay) {
      return new Script(headerDelay, 0, Duration.ZERO);
    }

    public static Script stream(int events, Duration eventInterval) {
      return new Script(Duration.ZERO, events, eventInterval);
    }
  }

  private final ServerSocket server;
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final AtomicInteger connections = new AtomicInteger();
  private final AtomicInteger requests = new AtomicInteger();
  private volatile Script script = Script.json();

  public RawUpstream() throws IOException {
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    threads.submit(this::acceptLoop);
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  public int port() {
    return server.getLocalPort();
  }

  public void script(Script next) {
    script = next;
  }

  /** TCP connections accepted so far. */
  public int connections() {
    return connections.get();
  }

  /** Requests read so far (over every connection). */
  public int requests() {
    return requests.get();
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        connections.incrementAndGet();
        threads.submit(() -> serve(socket));
      } catch (IOException closed) {
        return;
      }
    }
  }

  /** Answers requests on one connection until the client closes it. */
  private void serve(Socket socket) {
    try (socket) {
      InputStream in = new BufferedInputStream(socket.getInputStream());
      OutputStream out = socket.getOutputStream();
      while (readRequest(in)) {
        requests.incrementAndGet();
        answer(out, script);
      }
    } catch (IOException | InterruptedException ended) {
      // the client closed or cut the connection: nothing to answer
    }
  }

  /** Reads one request head and its Content-Length body; false at the end of the connection. */
  private static boolean readRequest(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    int b;
    while ((b = in.read()) != -1) {
      head.append((char) b);
      if (head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n")) {
        break;
      }
    }
    if (b == -1) {
      return false;
    }
    long length = 0;
    for (String line : head.toString().split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Long.parseLong(line.substring("content-length:".length()).trim());
      }
    }
    in.readNBytes((int) length);
    return true;
  }

  private static void answer(OutputStream out, Script script)
      throws IOException, InterruptedException {
    Thread.sleep(script.headerDelay().toMillis()); // time is the point: a slow upstream's headers
    if (script.events() == 0) {
      byte[] body = "{\"ok\":true}".getBytes(StandardCharsets.UTF_8);
      out.write(
          ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      return;
    }
    out.write(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    for (int i = 0; i < script.events(); i++) {
      Thread.sleep(script.eventInterval().toMillis()); // time is the point: a slow stream's pace
      chunk(out, "data: {\"n\":" + i + "}\n\n");
    }
    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  private static void chunk(OutputStream out, String text) throws IOException {
    byte[] data = text.getBytes(StandardCharsets.UTF_8);
    out.write((Integer.toHexString(data.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(data);
    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  @Override
  public void close() throws IOException {
    server.close();
    threads.shutdownNow();
  }
}
