package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.upstream.translate.JsonForTests;
import dev.spendgateway.upstream.translate.SchemaInstructions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class StructuredOutputFallbackTest {
  private static final JsonNode SCHEMA =
      JsonForTests.parse("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}");

  @Test
  void jsonSchemaBecomesJsonObjectWithTheSchemaAfterTheSystemMessages() {
    ObjectNode request =
        (ObjectNode)
            JsonForTests.parse(
                "{\"model\":\"gpt-6.1-sol\",\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":\"u\"}],"
                    + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"r\",\"strict\":true,\"schema\":"
                    + SCHEMA
                    + "}}}");
    JsonNode before = request.deepCopy();

    ObjectNode out = StructuredOutputFallback.toJsonObjectMode(request);

    assertEquals(JsonForTests.parse("{\"type\":\"json_object\"}"), out.get("response_format"));
    assertEquals(3, out.get("messages").size());
    assertEquals("system", out.get("messages").get(1).get("role").asText());
    assertEquals(
        SchemaInstructions.forSchema(SCHEMA), out.get("messages").get(1).get("content").asText());
    assertEquals("user", out.get("messages").get(2).get("role").asText());
    assertEquals(before, request, "the input is not modified");
  }

  @Test
  void schemaMovesFromTheGrammarIntoAStringOrBlockSystemPrompt() {
    ObjectNode stringSystem =
        (ObjectNode)
            JsonForTests.parse(
                "{\"system\":\"Be brief.\",\"output_config\":{\"format\":{\"type\":\"json_schema\",\"schema\":"
                    + SCHEMA
                    + "}}}");
    ObjectNode out = StructuredOutputFallback.schemaIntoSystemPrompt(stringSystem, SCHEMA);
    assertFalse(out.has("output_config"));
    assertEquals(
        "Be brief.\n\n" + SchemaInstructions.forSchema(SCHEMA), out.get("system").asText());

    ObjectNode blockSystem =
        (ObjectNode)
            JsonForTests.parse(
                "{\"system\":[{\"type\":\"text\",\"text\":\"Be brief.\"}],\"output_config\":{\"effort\":\"low\",\"format\":{\"type\":\"json_schema\",\"schema\":{}}}}");
    ObjectNode out2 = StructuredOutputFallback.schemaIntoSystemPrompt(blockSystem, SCHEMA);
    assertEquals(JsonForTests.parse("{\"effort\":\"low\"}"), out2.get("output_config"));
    assertEquals(2, out2.get("system").size());

    ObjectNode none = (ObjectNode) JsonForTests.parse("{}");
    assertEquals(
        SchemaInstructions.forSchema(SCHEMA),
        StructuredOutputFallback.schemaIntoSystemPrompt(none, SCHEMA).get("system").asText());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          additionalProperties must be false        | 400 | true  | {"error":{"message":"Invalid schema for response_format 'r': In context=(), 'additionalProperties' is required to be supplied and to be false.","type":"invalid_request_error","param":"response_format","code":null}}
          code invalid_json_schema                  | 400 | true  | {"error":{"message":"Invalid schema for response_format 'part_detail': In context=('properties', 'items'), 'required' is required to be supplied","type":"invalid_request_error","param":"response_format","code":"invalid_json_schema"}}
          a plain-text body saying so               | 400 | true  | Invalid schema for response_format 'x'
          an unrelated 400                          | 400 | false | {"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error","param":"temperature","code":null}}
          the same text with another status         | 500 | false | {"error":{"message":"Invalid schema for response_format 'r'","param":"response_format"}}
          """)
  void detectsStrictSchemaRejections(String what, int status, boolean expected, String body) {
    assertEquals(expected, StructuredOutputFallback.isStrictSchemaRejection(status, body), what);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          compiled grammar is too large             | 400 | true  | {"type":"error","error":{"type":"invalid_request_error","message":"The compiled grammar is too large, which would cause performance issues. Simplify your tool schemas or reduce the number of strict tools."},"request_id":"req_011CYFKFQUW16kvBsXKy4JSr"}
          schema too complex for compilation        | 400 | true  | {"type":"error","error":{"type":"invalid_request_error","message":"output_config.format.schema: Schema is too complex for compilation"}}
          credit balance is not a grammar problem   | 400 | false | {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}
          overloaded                                | 529 | false | {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
          """)
  void detectsGrammarTooLarge(String what, int status, boolean expected, String body) {
    assertEquals(expected, StructuredOutputFallback.isGrammarTooLarge(status, body), what);
  }

  /** What the caller asked, where the answering attempt went, what its body said → the header. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "no response_format          | {}                                   | false | {}                                                                 | ''",
        "text                        | {'type':'text'}                      | false | {}                                                                 | ''",
        "json_object on OpenAI       | {'type':'json_object'}               | false | {'response_format':{'type':'json_object'}}                         | json_object",
        "json_object on Claude       | {'type':'json_object'}               | true  | {}                                                                 | json_object",
        "strict schema on OpenAI     | {'type':'json_schema'}               | false | {'response_format':{'type':'json_schema','json_schema':{'strict':true}}} | strict",
        "non-strict schema on OpenAI | {'type':'json_schema'}               | false | {'response_format':{'type':'json_schema','json_schema':{}}}        | schema_in_prompt",
        "downgraded to json_object   | {'type':'json_schema'}               | false | {'response_format':{'type':'json_object'}}                         | json_object",
        "Claude's native format      | {'type':'json_schema'}               | true  | {'output_config':{'format':{'type':'json_schema'}}}                | strict",
        "schema in Claude's prompt   | {'type':'json_schema'}               | true  | {'system':'...'}                                                   | schema_in_prompt",
      })
  void theCallerSeesHowItsStructuredOutputWasAskedFor(
      String sentence, String asked, boolean toAnthropic, String sent, String expected) {
    JsonNode request = JsonForTests.parse("{\"response_format\":" + asked.replace('\'', '"') + "}");
    assertEquals(
        expected.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(expected),
        StructuredOutputFallback.enforcement(
            request, toAnthropic, JsonForTests.parse(sent.replace('\'', '"'))),
        sentence);
  }
}
