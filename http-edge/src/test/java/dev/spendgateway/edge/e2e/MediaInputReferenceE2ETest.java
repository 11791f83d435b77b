package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.ReceivedCall;
import dev.spendgateway.sim.SimRoute;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A video submit with an {@code input_reference} image, sent as a multipart form as the provider
 * takes it: vetted by the same policy as a JSON submit (the image by its size, within the policy's
 * file limit), reserved the same, and rebuilt from its vetted parts before it is sent; anything
 * else is refused naming the field before anything is reserved or sent.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MediaInputReferenceE2ETest {
  private static final String VIDEOS = "/media/v1/videos";
  private static final String BOUNDARY = "media-boundary-3";
  private static final long MIB = 1024 * 1024;

  private TestGateway gw;

  @BeforeAll
  void start() throws Exception {
    gw = E2eGateway.start("media-input-reference");
  }

  @AfterAll
  void stop() throws Exception {
    gw.close();
  }

  @BeforeEach
  void reset() {
    gw.sim.reset();
    gw.sim.clearReceived();
    gw.sim.setMedia(Duration.ZERO, Duration.ofMillis(100), false, 5, 10);
  }

  /** A form with the text {@code fields} and, when {@code imageBytes >= 0}, an image part. */
  private static byte[] form(Map<String, String> fields, long imageBytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Map.Entry<String, String> f : fields.entrySet()) {
      out.writeBytes(
          ("--"
                  + BOUNDARY
                  + "\r\nContent-Disposition: form-data; name=\""
                  + f.getKey()
                  + "\"\r\n\r\n"
                  + f.getValue()
                  + "\r\n")
              .getBytes(StandardCharsets.UTF_8));
    }
    if (imageBytes >= 0) {
      out.writeBytes(
          ("--"
                  + BOUNDARY
                  + "\r\nContent-Disposition: form-data; name=\"input_reference\";"
                  + " filename=\"frame.png\"\r\nContent-Type: image/png\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      byte[] image = new byte[(int) imageBytes];
      Arrays.fill(image, (byte) 7);
      out.writeBytes(image);
      out.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    }
    out.writeBytes(("--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.US_ASCII));
    return out.toByteArray();
  }

  private static Map<String, String> clip() {
    Map<String, String> f = new java.util.LinkedHashMap<>();
    f.put("model", "sora-2");
    f.put("prompt", "the frame comes alive");
    f.put("seconds", "4");
    f.put("size", "1280x720");
    return f;
  }

  private HttpResponse<String> submit(Brand brand, byte[] body, String contentType)
      throws Exception {
    return gw.send(
        gw.post(VIDEOS, brand)
            .timeout(Duration.ofSeconds(60))
            .header("content-type", contentType)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build());
  }

  private HttpResponse<String> submitForm(Brand brand, byte[] body) throws Exception {
    return submit(brand, body, "multipart/form-data; boundary=" + BOUNDARY);
  }

  private static JsonNode error(HttpResponse<String> r) throws Exception {
    return TestGateway.JSON.readTree(r.body()).get("error");
  }

  @Test
  void aFormWithAnImageIsVettedReservedAndSentRebuilt() throws Exception {
    Brand brand = Brand.fresh("media-form");
    HttpResponse<String> r = submitForm(brand, form(clip(), 300_000));
    assertEquals(200, r.statusCode(), r.body());
    assertEquals("video", TestGateway.JSON.readTree(r.body()).get("object").asText());
    // 4 s x $0.10 held, as for the same clip sent as JSON.
    JsonNode usage = gw.usage(brand.id());
    assertEquals(
        0,
        new BigDecimal("0.40")
            .compareTo(TestGateway.money(TestGateway.cap(usage, "brand_daily"), "reservedUsd")));
    List<ReceivedCall> calls = gw.sim.received(SimRoute.MEDIA_CREATE);
    assertEquals(1, calls.size());
    ReceivedCall sent = calls.get(0);
    assertEquals(
        List.of("model", "prompt", "seconds", "size", "input_reference"), sent.formFields());
    assertEquals(300_000L, sent.fileSizes().get("input_reference"));
    assertEquals("4", sent.formValues().get("seconds"));
    assertEquals("Bearer " + MediaJobsE2ETest.MEDIA_KEY, sent.header("authorization").orElse(""));
    gw.awaitSettled(brand.id());
  }

  @Test
  void anImageOverThePolicysFileLimitIs413NamingTheFieldWithNothingSent() throws Exception {
    Brand brand = Brand.fresh("media-form-big");
    HttpResponse<String> r = submitForm(brand, form(clip(), 25 * MIB + 1));
    assertEquals(413, r.statusCode(), r.body());
    assertEquals("input_reference", error(r).get("param").asText(), r.body());
    assertEquals(0, gw.sim.received(SimRoute.MEDIA_CREATE).size());
  }

  @Test
  void aFormThePolicyRefusesIsRefusedNamingTheFieldBeforeAnythingIsHeld() throws Exception {
    Brand brand = Brand.fresh("media-form-refused");
    Map<String, String> extra = clip();
    extra.put("callback_url", "https://example.com/hook");
    HttpResponse<String> unknown = submitForm(brand, form(extra, 10));
    assertEquals(400, unknown.statusCode(), unknown.body());
    assertEquals("callback_url", error(unknown).get("param").asText(), unknown.body());

    Map<String, String> asText = clip();
    asText.put("input_reference", "https://example.com/frame.png");
    HttpResponse<String> textImage = submitForm(brand, form(asText, -1));
    assertEquals(400, textImage.statusCode(), textImage.body());
    assertEquals("input_reference", error(textImage).get("param").asText(), textImage.body());

    HttpResponse<String> mixed =
        submit(brand, form(clip(), 10), "multipart/mixed; boundary=" + BOUNDARY);
    assertEquals(415, mixed.statusCode(), mixed.body());
    assertEquals("content-type", error(mixed).get("param").asText(), mixed.body());
    assertTrue(error(mixed).get("message").asText().contains("multipart/form-data"), mixed.body());

    HttpResponse<String> broken =
        submitForm(brand, "--nope\r\nnot a form".getBytes(StandardCharsets.US_ASCII));
    assertEquals(400, broken.statusCode(), broken.body());
    assertEquals(0, gw.sim.received(SimRoute.MEDIA_CREATE).size());
  }
}
