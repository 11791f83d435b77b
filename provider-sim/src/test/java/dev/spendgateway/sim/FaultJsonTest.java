package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Every fault the HTTP scripting API accepts, and the 400 messages for bad ones. */
class FaultJsonTest {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  static Stream<Arguments> faults() {
    return Stream.of(
        Arguments.of("{\"kind\":\"normal\"}", Fault.normal(), 1),
        Arguments.of(
            "{\"kind\":\"normal\",\"usage\":{\"inputTokens\":7},\"latencyMs\":50}",
            new Fault.Normal(Optional.of(new Usage(7, 15, 0, 0, 1)), Duration.ofMillis(50)),
            1),
        Arguments.of(
            "{\"kind\":\"status\",\"status\":429,\"headers\":{\"retry-after\":\"2\"},\"body\":\"slow down\",\"times\":3}",
            Fault.status(429, Map.of("retry-after", "2"), "slow down"),
            3),
        Arguments.of(
            "{\"kind\":\"status\",\"status\":400,\"body\":{\"type\":\"error\"}}",
            Fault.status(400, Map.of(), "{\"type\":\"error\"}"),
            1),
        Arguments.of(
            "{\"kind\":\"rateLimited\",\"retryAfter\":5,\"forever\":true}",
            Fault.rateLimited(5),
            -1),
        Arguments.of("{\"kind\":\"creditBalanceTooLow\"}", Fault.creditBalanceTooLow(), 1),
        Arguments.of("{\"kind\":\"overloaded\",\"times\":-1}", Fault.overloaded(), -1),
        Arguments.of("{\"kind\":\"reset\"}", Fault.connectionReset(), 1),
        Arguments.of("{\"kind\":\"streamCut\",\"afterEvents\":4}", Fault.streamCut(4), 1),
        Arguments.of(
            "{\"kind\":\"streamCut\",\"afterEvents\":4,\"abort\":false}",
            Fault.streamTruncated(4),
            1),
        Arguments.of(
            "{\"kind\":\"slowDrip\",\"intervalMs\":250}",
            Fault.slowDrip(Duration.ofMillis(250)),
            1),
        Arguments.of("{\"kind\":\"malformedSse\",\"afterEvents\":2}", Fault.malformedSse(2), 1),
        Arguments.of("{\"kind\":\"streamError\",\"afterEvents\":3}", Fault.streamError(3, 529), 1),
        Arguments.of("{\"kind\":\"invalidJson\"}", Fault.invalidJson(), 1),
        Arguments.of("{\"kind\":\"gzip\"}", Fault.gzip(), 1),
        Arguments.of(
            "{\"kind\":\"streamPause\",\"afterEvents\":2,\"pauseMs\":180000}",
            Fault.streamPause(2, Duration.ofMinutes(3)),
            1),
        Arguments.of("{\"kind\":\"usageMissing\",\"times\":2}", Fault.usageMissing(), 2));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("faults")
  void parsesEachFaultKind(String json, Fault expected, int times) throws Exception {
    FaultJson.Step step = FaultJson.step(MAPPER.readTree(json));
    assertEquals(expected, step.fault());
    assertEquals(times, step.times());
  }

  @ParameterizedTest(name = "{0} is refused naming {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{}                                      | 'kind'",
        "{\"kind\":\"teleport\"}                 | unknown 'kind'",
        "{\"kind\":\"status\"}                   | 'status'",
        "{\"kind\":\"status\",\"status\":99}     | status out of range",
        "{\"kind\":\"streamCut\"}                | 'afterEvents'",
        "{\"kind\":\"slowDrip\"}                 | 'intervalMs'",
        "{\"kind\":\"streamPause\",\"afterEvents\":1} | 'pauseMs'",
        "{\"kind\":\"streamPause\",\"pauseMs\":10}    | 'afterEvents'",
        "{\"kind\":\"reset\",\"times\":0}        | 'times'",
        "{\"kind\":\"normal\",\"usage\":{\"inputTokens\":-1}} | >= 0",
      })
  void refusesMalformedFaultsNamingTheField(String json, String expectedInMessage)
      throws Exception {
    FaultJson.BadScript e =
        assertThrows(FaultJson.BadScript.class, () -> FaultJson.step(MAPPER.readTree(json)));
    assertTrue(e.getMessage().contains(expectedInMessage), e.getMessage());
  }
}
