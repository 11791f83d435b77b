package dev.spendgateway.upstream.translate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ChatToMessagesTest {
  private static final ChatToMessages.Options HAIKU =
      new ChatToMessages.Options("claude-haiku-5-5", 1024, false);
  private static final ChatToMessages.Options SONNET =
      new ChatToMessages.Options("claude-sonnet-5-5", 2048, true);

  @Test
  void translatesRolesContentPartsAndParameters() {
    JsonNode chat =
        Json.parse(
            """
            {'model':'fast-summary',
             'messages':[
               {'role':'system','content':'You are terse.'},
               {'role':'developer','content':[{'type':'text','text':'Answer in English.'}]},
               {'role':'user','name':'ayse','content':[
                  {'type':'text','text':'What is in these?'},
                  {'type':'image_url','image_url':{'url':'data:image/png;base64,iVBORw0KGgo=','detail':'low'}},
                  {'type':'image_url','image_url':{'url':'https://example.com/cat.jpg'}}]},
               {'role':'assistant','content':'A cat.'},
               {'role':'user','content':'And?'}],
             'max_completion_tokens':300, 'max_tokens':999,
             'temperature':1.7, 'stop':'END', 'user':'brand-7', 'stream':true,
             'stream_options':{'include_usage':true}, 'n':1, 'store':false, 'seed':4,
             'presence_penalty':0, 'tools':[], 'logprobs':false}
            """);

    ObjectNode out = ChatToMessages.translate(chat, HAIKU);

    JsonNode expected =
        Json.parse(
            """
            {'model':'claude-haiku-5-5',
             'messages':[
               {'role':'user','content':[
                  {'type':'text','text':'What is in these?'},
                  {'type':'image','source':{'type':'base64','media_type':'image/png','data':'iVBORw0KGgo='}},
                  {'type':'image','source':{'type':'url','url':'https://example.com/cat.jpg'}}]},
               {'role':'assistant','content':'A cat.'},
               {'role':'user','content':'And?'}],
             'max_tokens':300, 'temperature':1.0, 'stop_sequences':['END'],
             'system':'You are terse.\\n\\nAnswer in English.',
             'metadata':{'user_id':'brand-7'}, 'stream':true}
            """);
    assertEquals(expected, Json.normalized(out));
  }

  @Test
  void maxTokensDefaultsToTheProfileAndMaxTokensIsReadWhenAlone() {
    assertEquals(
        1024,
        translate(HAIKU, "{'messages':[{'role':'user','content':'hi'}]}")
            .get("max_tokens")
            .asLong());
    assertEquals(
        77,
        translate(HAIKU, "{'messages':[{'role':'user','content':'hi'}],'max_tokens':77}")
            .get("max_tokens")
            .asLong());
  }

  @Test
  void temperatureWinsOverTopPAndTopPAloneIsKept() {
    ObjectNode both =
        translate(
            HAIKU, "{'messages':[{'role':'user','content':'hi'}],'temperature':0.3,'top_p':0.9}");
    assertEquals(0.3, both.get("temperature").asDouble());
    assertFalse(both.has("top_p"));
    ObjectNode topP = translate(HAIKU, "{'messages':[{'role':'user','content':'hi'}],'top_p':0.9}");
    assertEquals(0.9, topP.get("top_p").asDouble());
    assertFalse(topP.has("temperature"));
  }

  @Test
  void stopListBecomesStopSequences() {
    ObjectNode out =
        translate(HAIKU, "{'messages':[{'role':'user','content':'hi'}],'stop':['a','b']}");
    assertEquals(Json.parse("['a','b']"), out.get("stop_sequences"));
  }

  @Test
  void jsonObjectModeBecomesASystemInstruction() {
    ObjectNode out =
        translate(
            HAIKU,
            "{'messages':[{'role':'system','content':'Be brief.'},{'role':'user','content':'hi'}],"
                + "'response_format':{'type':'json_object'}}");
    assertEquals(
        "Be brief.\n\n" + SchemaInstructions.JSON_OBJECT_INSTRUCTION, out.get("system").asText());
    assertFalse(out.has("output_config"));
  }

  @Test
  void jsonSchemaIsNativeOnAModelWithTheFeature() {
    ObjectNode out =
        translate(
            SONNET,
            "{'messages':[{'role':'user','content':'hi'}],'response_format':{'type':'json_schema',"
                + "'json_schema':{'name':'r','strict':true,'schema':{'type':'object','properties':{'a':{'type':'string'}}}}}}");
    assertEquals(
        Json.parse(
            "{'format':{'type':'json_schema','schema':{'type':'object','properties':{'a':{'type':'string'}}}}}"),
        out.get("output_config"));
    assertFalse(out.has("system"));
  }

  @Test
  void jsonSchemaGoesIntoTheSystemPromptOnAModelWithoutTheFeature() {
    ObjectNode out =
        translate(
            HAIKU,
            "{'messages':[{'role':'user','content':'hi'}],'response_format':{'type':'json_schema',"
                + "'json_schema':{'name':'r','schema':{'type':'object'}}}}");
    assertFalse(out.has("output_config"));
    assertTrue(out.get("system").asText().endsWith("{\"type\":\"object\"}"));
  }

  @Test
  void theInputIsNotModified() {
    JsonNode chat =
        Json.parse(
            "{'messages':[{'role':'system','content':'s'},{'role':'user','content':'hi'}],'temperature':2}");
    JsonNode copy = chat.deepCopy();
    ChatToMessages.translate(chat, HAIKU);
    assertEquals(copy, chat);
  }

  @ParameterizedTest(name = "{0} is refused naming {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          function tools                  | tools                  | {'messages':[{'role':'user','content':'hi'}],'tools':[{'type':'function','function':{'name':'f'}}]}
          forced tool choice              | tool_choice            | {'messages':[{'role':'user','content':'hi'}],'tool_choice':'auto'}
          several choices                 | n                      | {'messages':[{'role':'user','content':'hi'}],'n':2}
          logprobs                        | logprobs               | {'messages':[{'role':'user','content':'hi'}],'logprobs':true}
          top logprobs                    | top_logprobs           | {'messages':[{'role':'user','content':'hi'}],'top_logprobs':3}
          audio output                    | audio                  | {'messages':[{'role':'user','content':'hi'}],'audio':{'voice':'alloy','format':'wav'}}
          audio modality                  | modalities             | {'messages':[{'role':'user','content':'hi'}],'modalities':['text','audio']}
          predicted output                | prediction             | {'messages':[{'role':'user','content':'hi'}],'prediction':{'type':'content','content':'x'}}
          web search options              | web_search_options     | {'messages':[{'role':'user','content':'hi'}],'web_search_options':{}}
          legacy functions                | functions              | {'messages':[{'role':'user','content':'hi'}],'functions':[{'name':'f'}]}
          logit bias                      | logit_bias             | {'messages':[{'role':'user','content':'hi'}],'logit_bias':{'50256':-100}}
          a frequency penalty             | frequency_penalty      | {'messages':[{'role':'user','content':'hi'}],'frequency_penalty':0.5}
          reasoning effort                | reasoning_effort       | {'messages':[{'role':'user','content':'hi'}],'reasoning_effort':'high'}
          an unknown field                | verbosity              | {'messages':[{'role':'user','content':'hi'}],'verbosity':'low'}
          a tool result message           | messages[1].role       | {'messages':[{'role':'user','content':'hi'},{'role':'tool','tool_call_id':'c','content':'x'}]}
          an assistant tool call          | messages[1].tool_calls | {'messages':[{'role':'user','content':'hi'},{'role':'assistant','content':null,'tool_calls':[{'id':'c'}]}]}
          an audio input part             | messages[0].content[0] | {'messages':[{'role':'user','content':[{'type':'input_audio','input_audio':{'data':'x','format':'wav'}}]}]}
          a file part                     | messages[0].content[0] | {'messages':[{'role':'user','content':[{'type':'file','file':{'file_id':'f'}}]}]}
          a bmp image                     | messages[0].content[0] | {'messages':[{'role':'user','content':[{'type':'image_url','image_url':{'url':'data:image/bmp;base64,Qk0='}}]}]}
          an ftp image                    | messages[0].content[0] | {'messages':[{'role':'user','content':[{'type':'image_url','image_url':{'url':'ftp://x/y.png'}}]}]}
          an empty message list           | messages               | {'messages':[]}
          system messages only            | messages               | {'messages':[{'role':'system','content':'s'}]}
          an empty user message           | messages[0].content    | {'messages':[{'role':'user','content':''}]}
          an unknown response format      | response_format.type   | {'messages':[{'role':'user','content':'hi'}],'response_format':{'type':'grammar'}}
          a schema-less json_schema       | response_format.json_schema.schema | {'messages':[{'role':'user','content':'hi'}],'response_format':{'type':'json_schema','json_schema':{'name':'x'}}}
          a zero max_tokens               | max_tokens             | {'messages':[{'role':'user','content':'hi'}],'max_tokens':0}
          """)
  void refusesWhatTheFallbackCannotHonour(String what, String field, String request) {
    TranslationError error =
        assertThrows(
            TranslationError.class, () -> ChatToMessages.translate(Json.parse(request), HAIKU));
    assertEquals(field, error.field(), what);
    assertEquals(field, error.toOpenAiError().path("error").path("param").asText());
    assertEquals(
        "invalid_request_error", error.toOpenAiError().path("error").path("type").asText());
  }

  private static ObjectNode translate(ChatToMessages.Options options, String json) {
    return ChatToMessages.translate(Json.parse(json), options);
  }
}
