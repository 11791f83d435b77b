package dev.spendgateway.edge.e2e;

import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * A caller on a raw socket, for the tests where the moment and the way a caller leaves matter: it
 * can close (FIN), half-close, or reset (RST) its connection exactly when a test says, which an
 * HTTP client library does not let one choose.
 */
final class RawCaller {
  private RawCaller() {}

  /** A connection to {@code gw} whose reads give up after 20 s. */
  static Socket connect(TestGateway gw) throws Exception {
    URI uri = URI.create(gw.base);
    Socket socket = new Socket(uri.getHost(), uri.getPort());
    socket.setSoTimeout(20_000);
    return socket;
  }

  /** Writes one JSON POST with the e2e gateway's token and {@code brand}'s spend headers. */
  static void send(Socket socket, String path, String body, Brand brand, String requestId)
      throws Exception {
    socket.getOutputStream().write(request(path, body, brand, requestId));
    socket.getOutputStream().flush();
  }

  /** Closes {@code socket} with a reset (RST) instead of an orderly close. */
  static void reset(Socket socket) throws Exception {
    socket.setSoLinger(true, 0);
    socket.close();
  }

  private static byte[] request(String path, String body, Brand brand, String requestId) {
    StringBuilder r = new StringBuilder();
    r.append("POST ").append(path).append(" HTTP/1.1\r\n");
    r.append("Host: 127.0.0.1\r\n");
    r.append("authorization: Bearer ").append(E2eGateway.TOKEN).append("\r\n");
    r.append("x-request-id: ").append(requestId).append("\r\n");
    brand.headerMap().forEach((k, v) -> r.append(k).append(": ").append(v).append("\r\n"));
    r.append("content-type: application/json\r\n");
    r.append("content-length: ")
        .append(body.getBytes(StandardCharsets.UTF_8).length)
        .append("\r\n\r\n");
    r.append(body);
    return r.toString().getBytes(StandardCharsets.UTF_8);
  }
}
