package dev.spendgateway.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The burst's client reads what a real server sends: chunks that split lines (and the end marker)
 * anywhere, a sized refusal, a stream cut before its last chunk.
 */
class SseBurstClientTest {

  private static final String EVENTS =
      "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n";

  /** The answer as the server writes it, in pieces flushed one by one. */
  private static List<String> answer(String kind) {
    return switch (kind) {
      case "chunked" -> {
        String a = EVENTS.substring(0, 17);
        String b = EVENTS.substring(17, EVENTS.length() - 6);
        String c = EVENTS.substring(EVENTS.length() - 6);
        yield List.of(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
            chunk(a),
            chunk(b).substring(0, 3),
            chunk(b).substring(3) + chunk(c) + "0\r\n\r\n");
      }
      case "sized" ->
          List.of(
              "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
                  + "content-length: 2\r\n\r\n{}");
      case "cut" ->
          List.of(
              "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
              chunk(EVENTS.substring(0, 40)));
      case "to-close" -> List.of("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n", EVENTS);
      default -> throw new IllegalArgumentException(kind);
    };
  }

  private static String chunk(String s) {
    return Integer.toHexString(s.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + s + "\r\n";
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    // answer,  status, content lines, end marker, problem
    "chunked,   200,    1,             true,       ",
    "sized,     429,    0,             false,      ",
    "cut,       200,    0,             false,      cut",
    "to-close,  200,    1,             true,       ",
  })
  void readsStatusLinesAndEnd(
      String kind, int status, int contentLines, boolean endMarker, String problem)
      throws Exception {
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        SseBurstClient client = new SseBurstClient()) {
      CompletableFuture<String> request = serveOnce(server, answer(kind));
      Seen seen = new Seen();
      URI target = URI.create("http://127.0.0.1:" + server.getLocalPort() + "/v1/chat");
      client.send(
          new InetSocketAddress(target.getHost(), target.getPort()),
          SseBurstClient.post(target, Map.of("x-spend-lane", "app"), "{\"a\":1}"),
          seen);

      assertEquals(problem == null ? "whole" : problem, seen.end.get(5, TimeUnit.SECONDS));
      assertEquals(status, seen.status);
      assertEquals(contentLines, seen.lines.stream().filter(HoldStreams::isContent).count());
      assertEquals(endMarker, seen.lines.contains("data: [DONE]"));
      String sent = request.get(5, TimeUnit.SECONDS);
      assertTrue(sent.startsWith("POST /v1/chat HTTP/1.1\r\n"), sent);
      assertTrue(sent.contains("\r\nx-spend-lane: app\r\n"), sent);
      assertTrue(sent.endsWith("content-length: 7\r\nconnection: close\r\n\r\n{\"a\":1}"), sent);
    }
  }

  /** Answers one connection with {@code pieces}, each flushed on its own, then closes it. */
  private static CompletableFuture<String> serveOnce(ServerSocket server, List<String> pieces) {
    return CompletableFuture.supplyAsync(
        () -> {
          try (Socket s = server.accept()) {
            String request = readRequest(s.getInputStream());
            OutputStream out = s.getOutputStream();
            for (String piece : pieces) {
              out.write(piece.getBytes(StandardCharsets.UTF_8));
              out.flush();
            }
            return request;
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        });
  }

  /** The head and the 7-byte body every case sends. */
  private static String readRequest(InputStream in) throws IOException {
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    int headEnd = -1;
    while (headEnd < 0 || got.size() < headEnd + 7) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      got.write(b);
      if (headEnd < 0 && got.toString(StandardCharsets.UTF_8).endsWith("\r\n\r\n")) {
        headEnd = got.size();
      }
    }
    return got.toString(StandardCharsets.UTF_8);
  }

  private static final class Seen implements SseBurstClient.Listener {
    final List<String> lines = new CopyOnWriteArrayList<>();
    final CompletableFuture<String> end = new CompletableFuture<>();
    volatile int status;

    @Override
    public void status(int code) {
      status = code;
    }

    @Override
    public void line(String line) {
      lines.add(line);
    }

    @Override
    public void end(String problem) {
      end.complete(problem == null ? "whole" : problem);
    }
  }
}
