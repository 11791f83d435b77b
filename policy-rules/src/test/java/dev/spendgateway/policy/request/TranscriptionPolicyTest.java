package dev.spendgateway.policy.request;

import static dev.spendgateway.policy.Fixtures.POLICY;
import static dev.spendgateway.policy.Fixtures.TODAY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.policy.request.PolicyDecision.Violation;
import dev.spendgateway.policy.request.TranscriptionDecision.TranscriptionAllowed;
import dev.spendgateway.policy.request.TranscriptionForm.Part;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TranscriptionPolicyTest {
  private static final Part AUDIO = Part.file("file", 1_000_000);
  private static final Part MODEL = Part.text("model", "gpt-6-transcribe");

  static Stream<Arguments> refusals() {
    return Stream.of(
        row(
            "a sixth field",
            "transcription_fields",
            "temperature",
            400,
            AUDIO,
            MODEL,
            Part.text("temperature", "0")),
        row(
            "stream is not vetted",
            "transcription_fields",
            "stream",
            400,
            AUDIO,
            MODEL,
            Part.text("stream", "true")),
        row("a field sent twice", "transcription_fields", "model", 400, AUDIO, MODEL, MODEL),
        row("no file", "file_required", "file", 400, MODEL),
        row("file sent as text", "file_required", "file", 400, Part.text("file", "abc"), MODEL),
        row("an empty file", "file_required", "file", 400, Part.file("file", 0), MODEL),
        row("a file over 25 MiB", "file_size", "file", 413, Part.file("file", 26_214_401), MODEL),
        row("no model", "model_required", "model", 400, AUDIO),
        row("model sent as a file", "form_field_type", "model", 400, AUDIO, Part.file("model", 3)),
        row(
            "a chat model",
            "model_allow_list",
            "model",
            400,
            AUDIO,
            Part.text("model", "gpt-6.1-sol")),
        row(
            "an unknown model",
            "model_allow_list",
            "model",
            400,
            AUDIO,
            Part.text("model", "whisper-1")),
        row(
            "prompt sent as a file",
            "form_field_type",
            "prompt",
            400,
            AUDIO,
            MODEL,
            Part.file("prompt", 9)),
        row(
            "an unknown response format",
            "response_format",
            "response_format",
            400,
            AUDIO,
            MODEL,
            Part.text("response_format", "diarized_json")));
  }

  @ParameterizedTest(name = "{0} -> {1} on {2} ({3})")
  @MethodSource("refusals")
  void refusesWithTheRuleAndField(
      String sentence, String rule, String field, int status, List<Part> parts) {
    Violation v =
        assertInstanceOf(
            Violation.class, POLICY.openAiTranscription(new TranscriptionForm(parts), TODAY));
    assertEquals(rule, v.rule(), v.message());
    assertEquals(field, v.field(), v.message());
    assertEquals(status, v.httpStatus());
  }

  @Test
  void theFiveVettedFieldsGoOnInTheCallersOrder() {
    TranscriptionAllowed a =
        assertInstanceOf(
            TranscriptionAllowed.class,
            POLICY.openAiTranscription(
                TranscriptionForm.of(
                    MODEL,
                    Part.text("language", "tr"),
                    AUDIO,
                    Part.text("prompt", "FeedHand"),
                    Part.text("response_format", "verbose_json")),
                TODAY));
    assertEquals(
        List.of("model", "language", "file", "prompt", "response_format"), a.forwardFields());
    assertEquals("gpt-6-transcribe", a.model());
  }

  @Test
  void theWorstCaseIsTheFileAtEightKilobitsPerSecond() {
    TranscriptionAllowed a =
        assertInstanceOf(
            TranscriptionAllowed.class,
            POLICY.openAiTranscription(TranscriptionForm.of(AUDIO, MODEL), TODAY));
    // 1,000,000 bytes = 8,000,000 bits at 8,000 bit/s = 1000 s; 1000 s x $0.006/min = $0.1
    assertEquals(1000, a.worstCase().audioSecondsAssumed());
    assertEquals(100_000, a.worstCase().micros());
  }

  @Test
  void negativePartSizesAreImpossible() {
    assertThrows(IllegalArgumentException.class, () -> Part.file("file", -1));
  }

  private static Arguments row(
      String sentence, String rule, String field, int status, Part... parts) {
    return Arguments.of(sentence, rule, field, status, List.of(parts));
  }
}
