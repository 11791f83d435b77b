package dev.spendgateway.upstream.usage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.UsageReport;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/** The one table of pass-through APIs: each row's route, upstream path and usage rules. */
class ApiKindTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @ParameterizedTest(name = "{0} is served at {3} and sent to {1} {2}")
  @CsvSource({
    "ANTHROPIC_MESSAGES,      ANTHROPIC, /v1/messages,             /anthropic/v1/messages",
    "OPENAI_CHAT_COMPLETIONS, OPENAI,    /v1/chat/completions,     /openai/v1/chat/completions",
    "OPENAI_RESPONSES,        OPENAI,    /v1/responses,            /openai/v1/responses",
    "OPENAI_TRANSCRIPTIONS,   OPENAI,    /v1/audio/transcriptions, /openai/v1/audio/transcriptions",
  })
  void eachApiHasItsProviderPathAndRoute(
      ApiKind kind, Provider provider, String path, String route) {
    assertEquals(provider, kind.provider());
    assertEquals(path, kind.path());
    assertEquals(route, kind.route());
    assertEquals(Optional.of(kind), ApiKind.of(provider, path));
  }

  @ParameterizedTest(name = "{0} reads usage from its whole answer")
  @CsvSource(
      delimiter = '|',
      value = {
        "ANTHROPIC_MESSAGES      | {\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}",
        "OPENAI_CHAT_COMPLETIONS | {\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5}}",
        "OPENAI_RESPONSES        | {\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}",
        "OPENAI_TRANSCRIPTIONS   | {\"text\":\"hi\",\"usage\":{\"type\":\"duration\",\"seconds\":7}}",
      })
  void aWholeAnswerWithUsageIsReported(ApiKind kind, String answer) throws Exception {
    UsageReport report = kind.usageOfAnswer(JSON.readTree(answer));
    assertEquals(UsageReport.Reported.class, report.getClass(), kind + ": " + report);
  }

  @ParameterizedTest(name = "{0}: an answer without usage keeps the worst case")
  @EnumSource(ApiKind.class)
  void anAnswerWithoutUsageIsNotReported(ApiKind kind) throws Exception {
    JsonNode answer = JSON.readTree("{\"id\":\"x\"}");
    assertEquals(UsageReport.NotReported.class, kind.usageOfAnswer(answer).getClass());
  }

  @Test
  void aPlainTextTranscriptionSaysWhyItCarriesNoUsage() {
    assertEquals(
        new UsageReport.NotReported(
            "transcription answer is not JSON (text, srt or vtt carry no usage)"),
        ApiKind.OPENAI_TRANSCRIPTIONS.usageOfAnswer(null));
  }
}
