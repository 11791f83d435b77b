package dev.spendgateway.edge.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.spendgateway.edge.body.CallerBodies;
import java.util.stream.Stream;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A caller's JSON body as every JSON route reads it: a row per body and the refusal it gets. */
class CallerJsonBodyTest {

  private static CallerBodies.Body read(String text) {
    return new CallerBodies.Read(ByteString.fromString(text));
  }

  static Stream<Arguments> bodies() {
    return Stream.of(
        Arguments.of(
            "a body over the limit is a 413 on the max_body_bytes rule",
            new CallerBodies.TooLarge(1024),
            413,
            "policy:max_body_bytes"),
        Arguments.of(
            "a body cut off mid-way is the caller's 400, named by its rule",
            new CallerBodies.Unreadable(400, "body_framing", "cut off"),
            400,
            "body_framing"),
        Arguments.of(
            "a body that arrived too slowly is a 408, named by its rule",
            new CallerBodies.Unreadable(408, "body_read_timeout", "too slow"),
            408,
            "body_read_timeout"),
        Arguments.of(
            "a body that is not JSON is a 400 on the json rule",
            read("{\"model\":"),
            400,
            "policy:json"),
        Arguments.of(
            "a JSON array is not a request: 400 on the json rule",
            read("[1,2]"),
            400,
            "policy:json"),
        Arguments.of("a JSON object is read", read("{\"model\":\"fast-summary\"}"), 0, null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bodies")
  void reads(String sentence, CallerBodies.Body body, int status, String errorClass) {
    CallerJsonBody.Read read = CallerJsonBody.parsed(body);
    if (errorClass == null) {
      assertEquals(
          "fast-summary",
          assertInstanceOf(CallerJsonBody.Json.class, read, sentence)
              .object()
              .path("model")
              .asText());
      return;
    }
    CallerJsonBody.Refused refused = assertInstanceOf(CallerJsonBody.Refused.class, read, sentence);
    assertEquals(status, refused.status(), sentence);
    assertEquals(errorClass, refused.errorClass(), sentence);
    assertEquals("body", refused.field(), sentence);
  }
}
