package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.ReceivedCall;
import dev.spendgateway.sim.SimRoute;
import java.io.ByteArrayOutputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Transcription uploads up to the policy's file limit (25 MiB) reach the provider whole, over the
 * shipped server limits: neither the socket's max-content-length nor Pekko's in-memory read limit
 * (max-to-strict-bytes, 8 MiB) may cut a file the policy allows. One byte over is the policy's own
 * refusal, which names the limit.
 */
class TranscriptionUploadE2ETest extends GatewayPerClass {
  private static final long MIB = 1024 * 1024;
  private static final long POLICY_LIMIT = 25 * MIB;
  private static final String BOUNDARY = "upload-boundary-7";

  @Override
  protected TestGateway startGateway() throws Exception {
    return E2eGateway.start("uploads");
  }

  /** A transcription form with an audio file of {@code fileBytes} bytes. */
  private static byte[] form(long fileBytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) fileBytes + 1024);
    String head =
        "--"
            + BOUNDARY
            + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ngpt-6-transcribe\r\n"
            + "--"
            + BOUNDARY
            + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"talk.mp3\"\r\n"
            + "Content-Type: audio/mpeg\r\n\r\n";
    out.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
    byte[] audio = new byte[(int) fileBytes];
    Arrays.fill(audio, (byte) 'a');
    out.writeBytes(audio);
    out.writeBytes(("\r\n--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.US_ASCII));
    return out.toByteArray();
  }

  private HttpResponse<String> upload(long fileBytes, Brand brand) throws Exception {
    HttpRequest request =
        gw.post(TestGateway.TRANSCRIPTIONS, brand)
            .timeout(Duration.ofSeconds(60))
            .header("content-type", "multipart/form-data; boundary=" + BOUNDARY)
            .POST(HttpRequest.BodyPublishers.ofByteArray(form(fileBytes)))
            .build();
    return gw.send(request);
  }

  @ParameterizedTest(name = "a {0}-byte file reaches the provider whole")
  @ValueSource(longs = {10 * MIB, 25 * MIB})
  void anUploadUpToThePolicyLimitIsTranscribed(long fileBytes) throws Exception {
    Brand brand = Brand.fresh("upload");

    HttpResponse<String> r = upload(fileBytes, brand);

    assertEquals(200, r.statusCode(), r.body());
    List<ReceivedCall> calls = gw.sim.received(SimRoute.OPENAI_TRANSCRIPTIONS);
    assertEquals(1, calls.size());
    assertEquals(
        fileBytes, calls.get(0).fileSizes().get("file"), calls.get(0).fileSizes().toString());
    gw.awaitSettled(brand.id());
  }

  @ParameterizedTest(name = "a {0}-byte file is the policy's 413")
  @ValueSource(longs = {25 * MIB + 1})
  void oneByteOverThePolicyLimitIsItsClearRefusal(long fileBytes) throws Exception {
    Brand brand = Brand.fresh("upload-over");

    HttpResponse<String> r = upload(fileBytes, brand);

    assertEquals(413, r.statusCode(), r.body());
    assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(null));
    JsonNode error = TestGateway.JSON.readTree(r.body()).path("error");
    assertEquals("file", error.path("param").asText(), r.body());
    assertTrue(
        error
            .path("message")
            .asText()
            .contains("the gateway accepts at most " + POLICY_LIMIT + " bytes"),
        r.body());
    assertTrue(gw.sim.received().isEmpty(), "never reached the provider");
  }
}
