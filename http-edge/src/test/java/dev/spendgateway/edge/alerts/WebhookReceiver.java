package dev.spendgateway.edge.alerts;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * A webhook receiver on 127.0.0.1 for tests: records every request (delivery id, signature, body)
 * and answers what {@code answer} says for the n-th request: a status, or -1 to hang past the
 * sender's timeout. Can be stopped and started again on the same port (a receiver going away).
 */
final class WebhookReceiver implements AutoCloseable {
  record Received(String deliveryId, String signature, String body) {}

  interface Answer {
    int statusFor(int n);
  }

  final List<Received> received = new CopyOnWriteArrayList<>();
  private final Answer answer;
  private final CountDownLatch released = new CountDownLatch(1);
  private int port;
  private HttpServer server;

  WebhookReceiver(Answer answer) throws IOException {
    this.answer = answer;
    start(0);
  }

  static WebhookReceiver answering(IntSupplier status) throws IOException {
    return new WebhookReceiver(n -> status.getAsInt());
  }

  URI url() {
    return URI.create("http://127.0.0.1:" + port + "/hook");
  }

  void start(int onPort) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", onPort), 0);
    port = server.getAddress().getPort();
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext(
        "/hook",
        exchange -> {
          String body =
              new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          int n;
          synchronized (received) {
            received.add(
                new Received(
                    exchange.getRequestHeaders().getFirst("x-gateway-delivery"),
                    exchange.getRequestHeaders().getFirst("x-gateway-signature"),
                    body));
            n = received.size();
          }
          int status = answer.statusFor(n);
          if (status < 0) {
            try {
              released.await(30, TimeUnit.SECONDS); // hang: the sender must time out
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            status = 200;
          }
          exchange.sendResponseHeaders(status, -1);
          exchange.close();
        });
    server.start();
  }

  void stop() {
    server.stop(0);
  }

  void restart() throws IOException {
    start(port);
  }

  @Override
  public void close() {
    released.countDown();
    server.stop(0);
  }
}
