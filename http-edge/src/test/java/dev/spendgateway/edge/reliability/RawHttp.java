package dev.spendgateway.edge.reliability;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * HTTP/1.1 written and read by hand, for what a well-behaved client cannot send: broken framing,
 * headers trickled a line at a time, a body that never ends.
 */
final class RawHttp {
  private RawHttp() {}

  /** A raw HTTP/1.1 answer: status, headers (lower-case names), body. */
  record Answer(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.getOrDefault(name, "");
    }
  }

  /** A socket to the gateway at {@code base}, reads bounded by {@code readTimeoutMillis}. */
  static Socket connect(String base, int readTimeoutMillis) throws IOException {
    URI uri = URI.create(base);
    Socket socket = new Socket(uri.getHost(), uri.getPort());
    socket.setSoTimeout(readTimeoutMillis);
    return socket;
  }

  /**
   * Writes {@code request} as is on a fresh connection and reads the answer up to the end of its
   * body.
   */
  static Answer exchange(String base, String request) throws IOException {
    try (Socket socket = connect(base, 20_000)) {
      write(socket, request);
      return read(socket.getInputStream());
    }
  }

  static void write(Socket socket, String bytes) throws IOException {
    socket.getOutputStream().write(bytes.getBytes(StandardCharsets.ISO_8859_1));
    socket.getOutputStream().flush();
  }

  /** One answer (fixed length or none), read up to the end of its body. */
  static Answer read(InputStream in) throws IOException {
    ByteArrayOutputStream seen = new ByteArrayOutputStream();
    int headEnd = -1;
    Map<String, String> headers = new TreeMap<>();
    int status = 0;
    while (true) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      seen.write(b);
      String text = seen.toString(StandardCharsets.ISO_8859_1);
      if (headEnd < 0 && text.endsWith("\r\n\r\n")) {
        headEnd = text.length();
        String[] lines = text.split("\r\n");
        status = Integer.parseInt(lines[0].split(" ")[1]);
        for (int i = 1; i < lines.length; i++) {
          int colon = lines[i].indexOf(':');
          if (colon > 0) {
            headers.put(
                lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT),
                lines[i].substring(colon + 1).strip());
          }
        }
      }
      if (headEnd >= 0
          && text.length() - headEnd
              >= Integer.parseInt(headers.getOrDefault("content-length", "0"))) {
        return new Answer(status, headers, text.substring(headEnd));
      }
    }
    throw new IOException(
        "the connection closed before a whole answer: "
            + seen.toString(StandardCharsets.ISO_8859_1));
  }

  /**
   * Blocks until the server closes {@code socket} (end of stream or a reset), discarding anything
   * it sends; true if it did within the socket's read timeout.
   */
  static boolean awaitClosed(Socket socket) {
    try {
      InputStream in = socket.getInputStream();
      while (in.read() >= 0) {
        // a server may say something before it closes; only the close matters here
      }
      return true;
    } catch (java.net.SocketTimeoutException stillOpen) {
      return false;
    } catch (IOException reset) {
      return true;
    }
  }
}
