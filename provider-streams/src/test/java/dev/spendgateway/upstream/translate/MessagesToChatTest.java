package dev.spendgateway.upstream.translate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MessagesToChatTest {

  @Test
  void translatesARecordedAnswer() {
    JsonNode out =
        MessagesToChat.translate(
            Json.parse(Json.resource("anthropic-message.json")),
            "structured-analysis",
            1_790_000_000L);

    JsonNode expected =
        Json.parse(
            """
            {'id':'chatcmpl-msg_013Zva2CMHLNnXjNJJKqJ2EF','object':'chat.completion','created':1790000000,
             'model':'structured-analysis',
             'choices':[{'index':0,
                         'message':{'role':'assistant','content':'Hi! My name is Claude. How can I help?','refusal':null},
                         'logprobs':null,'finish_reason':'stop'}],
             'usage':{'prompt_tokens':3995,'completion_tokens':503,'total_tokens':4498,
                      'prompt_tokens_details':{'cached_tokens':1800}}}
            """);
    assertEquals(expected, Json.normalized(out));
  }

  @ParameterizedTest(name = "stop_reason {0} → finish_reason {1}")
  @CsvSource(
      textBlock =
          """
          end_turn,                      stop
          stop_sequence,                 stop
          pause_turn,                    stop
          max_tokens,                    length
          model_context_window_exceeded, length
          refusal,                       content_filter
          tool_use,                      tool_calls
          some_future_reason,            stop
          """)
  void mapsStopReasons(String stopReason, String finishReason) {
    JsonNode answer =
        Json.parse(
            "{'id':'m','type':'message','content':[{'type':'text','text':'x'}],'stop_reason':'"
                + stopReason
                + "','usage':{'input_tokens':1,'output_tokens':1}}");
    assertEquals(
        finishReason,
        MessagesToChat.translate(answer, "p", 0)
            .path("choices")
            .get(0)
            .path("finish_reason")
            .asText());
  }

  @Test
  void missingUsageIsLeftOutNotZero() {
    JsonNode answer =
        Json.parse("{'id':'m','type':'message','content':[],'stop_reason':'end_turn'}");
    JsonNode out = MessagesToChat.translate(answer, "p", 0);
    assertFalse(out.has("usage"));
    assertEquals("", out.path("choices").get(0).path("message").path("content").asText());
  }
}
