package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The bodies a node holds in memory at once are bounded ({@code gateway.body-memory-share}): a body
 * is held from its read until the provider's answer starts, and 24 uploads of 25 MiB at once ran a
 * 512 MiB heap out of memory, killing the node with every open call on it. Here the node may hold 5
 * MiB of bodies; a 3 MiB upload waits at a slow provider, and a second large body on any route is
 * answered at once with a 503 {@code body_memory} and retry-after in its provider's shape, nothing
 * read, reserved or sent. Once the first call is answered its share is given back.
 */
class BodyMemoryE2ETest {
  private static final int MIB = 1024 * 1024;
  private static final long LIMIT = 5L * MIB;
  private static final String BOUNDARY = "memory-boundary-3";
  private static TestGateway gw;

  @BeforeAll
  static void start() throws Exception {
    // The gateway runs in this JVM: the share of its heap that is LIMIT bytes.
    double share = (double) LIMIT / Runtime.getRuntime().maxMemory();
    gw = E2eGateway.start("body-memory", Map.of("gateway.body-memory-share", share));
  }

  @AfterAll
  static void stop() throws Exception {
    gw.close();
  }

  /** A transcription form around a file of {@code fileBytes}. */
  private static byte[] form(int fileBytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(fileBytes + 1024);
    out.writeBytes(
        ("--"
                + BOUNDARY
                + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ngpt-6-transcribe\r\n"
                + "--"
                + BOUNDARY
                + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"talk.mp3\"\r\n"
                + "Content-Type: audio/mpeg\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    byte[] audio = new byte[fileBytes];
    Arrays.fill(audio, (byte) 'a');
    out.writeBytes(audio);
    out.writeBytes(("\r\n--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.US_ASCII));
    return out.toByteArray();
  }

  /** A JSON body of {@code bytes}, padded with whitespace after a valid request. */
  private static byte[] json(String start, int bytes) {
    byte[] body = new byte[bytes];
    Arrays.fill(body, (byte) ' ');
    byte[] head = start.getBytes(StandardCharsets.UTF_8);
    System.arraycopy(head, 0, body, 0, head.length);
    return body;
  }

  private static final String CLAUDE =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
  private static final String ROUTED =
      "{\"model\":\"fast-summary\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

  private static HttpRequest request(
      String path, byte[] body, boolean chunked, Brand brand, String requestId) {
    HttpRequest.Builder b =
        gw.post(path, brand)
            .timeout(Duration.ofSeconds(60))
            .header("x-request-id", requestId)
            .header(
                "content-type",
                path.equals(TestGateway.TRANSCRIPTIONS)
                    ? "multipart/form-data; boundary=" + BOUNDARY
                    : "application/json");
    return b.POST(
            chunked
                ? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))
                : HttpRequest.BodyPublishers.ofByteArray(body))
        .build();
  }

  private static byte[] bodyFor(String path, int bytes) {
    return switch (path) {
      case TestGateway.TRANSCRIPTIONS -> form(bytes);
      case TestGateway.ANTHROPIC -> json(CLAUDE, bytes);
      default -> json(ROUTED, bytes);
    };
  }

  @ParameterizedTest(
      name = "{0}, {1} MiB, chunked {2}, while 3 MiB wait upstream: 503 body_memory in {3} shape")
  @CsvSource({
    // path,                               MiB, chunked, shape
    "/openai/v1/audio/transcriptions,       3,   false,   openai",
    "/openai/v1/audio/transcriptions,       1,   true,    openai",
    "/anthropic/v1/messages,                3,   false,   anthropic",
    "/v1/chat/completions,                  3,   false,   openai",
  })
  void aBodyPastTheNodesBodyMemoryIsRefusedAtOnceAndHoldsNothing(
      String path, int mib, boolean chunked, String shape) throws Exception {
    gw.sim.clearScripts();
    gw.sim.script(SimRoute.OPENAI_TRANSCRIPTIONS, Fault.delayed(Duration.ofSeconds(3)));
    long before = gw.sim.receivedCount();
    String heldId = "held-" + System.nanoTime();
    CompletableFuture<HttpResponse<String>> held =
        gw.sendAsync(
            request(
                TestGateway.TRANSCRIPTIONS,
                form(3 * MIB),
                false,
                Brand.fresh("memory-held"),
                heldId));
    Eventually.until(
        "the held upload reaches the provider",
        Duration.ofSeconds(20),
        () -> gw.sim.receivedCount() != before);
    assertEquals(before + 1, gw.sim.receivedCount(), "the held upload waits at the provider");

    // A chunked body declares no length: it counts as the route's whole limit.
    String refusedId = "refused-" + System.nanoTime();
    Brand brand = Brand.fresh("memory-refused");
    HttpResponse<String> refused =
        gw.send(request(path, bodyFor(path, mib * MIB), chunked, brand, refusedId));

    assertEquals(503, refused.statusCode(), refused.body());
    assertEquals("1", refused.headers().firstValue("retry-after").orElse(null));
    assertEquals("true", refused.headers().firstValue("x-gateway-error").orElse(null));
    JsonNode error = TestGateway.JSON.readTree(refused.body());
    if (shape.equals("anthropic")) {
      assertEquals("overloaded_error", error.path("error").path("type").asText(), refused.body());
    } else {
      assertEquals("gateway_overloaded", error.path("error").path("code").asText(), refused.body());
    }
    assertTrue(refused.body().contains("body_memory"), refused.body());
    JsonNode line = gw.awaitOnlyAccessLine(refusedId);
    assertEquals(503, line.path("status").asInt(), line.toString());
    assertEquals("body_memory", line.path("error").asText(), line.toString());
    assertTrue(line.path("reserved_usd").isNull(), "nothing reserved: " + line);
    assertEquals(before + 1, gw.sim.receivedCount(), "nothing sent for the refused body");

    assertEquals(200, held.get(30, TimeUnit.SECONDS).statusCode(), "the held upload is answered");
    // Its share is given back: the same body is now read (and answered by the route as usual).
    gw.sim.clearScripts();
    HttpResponse<String> after =
        gw.send(
            request(
                path,
                bodyFor(path, path.equals(TestGateway.TRANSCRIPTIONS) ? mib * MIB : 64 * 1024),
                chunked,
                Brand.fresh("memory-after"),
                "after-" + System.nanoTime()));
    assertEquals(200, after.statusCode(), after.body());
    gw.awaitSettled(brand.id());
  }

  /**
   * A caller that hangs up while its body is still uploading: nothing is reserved or sent, its line
   * says why, and the share its body took is given back (the next large body is read, not refused
   * for memory a gone caller still held).
   */
  @ParameterizedTest(name = "{0}, {1} bytes, the caller {2} half way: nothing held, share back")
  @CsvSource({
    // path,                               bytes,    leaves
    "/openai/v1/audio/transcriptions,       26214400, resets",
    "/openai/v1/audio/transcriptions,       26214400, closes",
    "/anthropic/v1/messages,                4194304,  resets",
    "/anthropic/v1/messages,                4194304,  closes",
    "/v1/chat/completions,                  4194304,  resets",
  })
  void aCallerGoneMidUploadHoldsNothing(String path, int bytes, String leaves) throws Exception {
    gw.sim.clearScripts();
    long before = gw.sim.receivedCount();
    Brand brand = Brand.fresh("mid-upload");
    String requestId = "mid-upload-" + System.nanoTime();
    byte[] body = bodyFor(path, bytes);
    StringBuilder head = new StringBuilder();
    head.append("POST ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    head.append("authorization: Bearer ").append(E2eGateway.TOKEN).append("\r\n");
    head.append("x-request-id: ").append(requestId).append("\r\n");
    brand.headerMap().forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
    head.append("content-type: ")
        .append(
            path.equals(TestGateway.TRANSCRIPTIONS)
                ? "multipart/form-data; boundary=" + BOUNDARY
                : "application/json")
        .append("\r\n");
    head.append("content-length: ").append(body.length).append("\r\n\r\n");

    try (java.net.Socket socket = RawCaller.connect(gw)) {
      socket.getOutputStream().write(head.toString().getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().write(body, 0, body.length / 2);
      socket.getOutputStream().flush();
      // No gauge shows the gateway mid-read: a pause (time is the point) so the hang-up comes while
      // it reads, not before; hanging up earlier still passes, so a slow machine cannot fail this.
      Thread.sleep(300);
      if (leaves.equals("resets")) {
        socket.setSoLinger(true, 0);
      }
    }

    JsonNode line = gw.awaitOnlyAccessLine(requestId);
    assertTrue(line.path("reserved_usd").isNull(), "nothing reserved: " + line);
    // The caller's doing, not the gateway's: never a 500 and an ERROR line.
    assertEquals(400, line.path("status").asInt(), line.toString());
    assertEquals("body_framing", line.path("error").asText(), line.toString());
    assertEquals(before, gw.sim.receivedCount(), "nothing sent");
    // The share is back: a body near the limit is read and answered.
    HttpResponse<String> next =
        gw.send(
            request(
                TestGateway.TRANSCRIPTIONS,
                form(4 * MIB),
                false,
                Brand.fresh("mid-upload-next"),
                "mid-upload-next-" + System.nanoTime()));
    assertEquals(200, next.statusCode(), next.body());
  }
}
