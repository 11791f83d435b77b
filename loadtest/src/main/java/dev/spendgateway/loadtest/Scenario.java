package dev.spendgateway.loadtest;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;

/** One kind of load: what call {@code i} sends, and which {@link OpStats} it records into. */
interface Scenario {

  /** The stats this scenario records into, in the order they are reported. */
  List<OpStats> ops();

  /**
   * How many independent targets the calls go to (2 in compare mode: gateway and direct). Each gets
   * its own workers, its own call sequence and (open loop) its own schedule, so a slow target never
   * holds up the calls to the other.
   */
  default int targets() {
    return 1;
  }

  /**
   * Runs call {@code i} of {@code target}. {@code fromNanos} is where its latency is measured from:
   * the intended send time in open loop, the actual send time in closed loop.
   */
  void execute(HttpClient client, int target, long i, long fromNanos) throws InterruptedException;

  /**
   * Sends {@code request}, reads the whole body and records status and latency (from {@code
   * fromNanos} to the last byte) into {@code stats}; with {@code ttfb}, also the time to the first
   * body byte. Returns the status and body, or {@code null} on a transport error.
   */
  static Answer send(
      HttpClient client,
      HttpRequest request,
      OpStats stats,
      long fromNanos,
      boolean ttfb,
      boolean keepBody)
      throws InterruptedException {
    try {
      HttpResponse<InputStream> response =
          client.send(request, HttpResponse.BodyHandlers.ofInputStream());
      byte[] body = null;
      try (InputStream in = response.body()) {
        if (ttfb) {
          int first = in.read();
          stats.recordTtfb(System.nanoTime() - fromNanos);
          if (first >= 0) {
            in.transferTo(OutputStream.nullOutputStream());
          }
        } else if (keepBody) {
          body = in.readAllBytes();
        } else {
          in.transferTo(OutputStream.nullOutputStream());
        }
      }
      stats.record(response.statusCode(), System.nanoTime() - fromNanos);
      return new Answer(response.statusCode(), body);
    } catch (IOException e) {
      stats.recordError();
      return null;
    }
  }

  /** A status and (when asked for) the body. */
  record Answer(int status, byte[] body) {}
}
