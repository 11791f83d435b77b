package dev.spendgateway.policy.request;

import static dev.spendgateway.policy.Fixtures.CATALOG;
import static dev.spendgateway.policy.Fixtures.LIMITS;
import static dev.spendgateway.policy.Fixtures.POLICY;
import static dev.spendgateway.policy.Fixtures.TODAY;
import static dev.spendgateway.policy.Fixtures.json;
import static dev.spendgateway.policy.Fixtures.model;
import static dev.spendgateway.policy.Fixtures.sizeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.cost.UnsizedContent;
import dev.spendgateway.policy.cost.WorstCase;
import dev.spendgateway.policy.cost.WorstCaseEstimator;
import dev.spendgateway.policy.request.PolicyDecision.Allowed;
import dev.spendgateway.policy.request.PolicyDecision.Violation;
import dev.spendgateway.policy.request.PolicyLimits.UrlContent;
import java.util.Collections;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Content the provider fetches from a URL or reads from its own file store, on all three JSON
 * routes. Each row puts one content part after a text part in the first user turn (so it sits at
 * index 1), unless the row writes the whole conversation itself.
 */
class ReferencedContentPolicyTest {

  /** The three JSON routes, each able to wrap content parts into a minimal valid body. */
  enum Route {
    ANTHROPIC("'model':'claude-opus-5-5','max_tokens':1000,", "messages", "text"),
    CHAT("'model':'gpt-6.1-sol',", "messages", "text"),
    RESPONSES("'model':'gpt-6.1-sol','tools':[{'type':'web_search'}],", "input", "input_text");

    private final String head;
    private final String conversation;
    private final String textType;

    Route(String head, String conversation, String textType) {
      this.head = head;
      this.conversation = conversation;
      this.textType = textType;
    }

    /** A body whose first user turn is a text part followed by {@code part}. */
    JsonNode withPart(String part) {
      return withConversation(
          "[{'role':'user','content':[{'type':'" + textType + "','text':'look'}," + part + "]}]");
    }

    JsonNode withConversation(String items) {
      return json("{" + head + "'" + conversation + "':" + items + "}");
    }

    PolicyDecision decide(RequestPolicy policy, JsonNode body) {
      return switch (this) {
        case ANTHROPIC -> policy.anthropicMessages(body, sizeOf(body), TODAY);
        case CHAT -> policy.openAiChatCompletions(body, sizeOf(body), TODAY);
        case RESPONSES -> policy.openAiResponses(body, sizeOf(body), TODAY);
      };
    }
  }

  private static final RequestPolicy ALL_URLS_ALLOWED = policy(new UrlContent(true, true));
  private static final RequestPolicy URL_IMAGES_ONLY = policy(new UrlContent(true, false));
  private static final RequestPolicy URL_DOCUMENTS_ONLY = policy(new UrlContent(false, true));

  private static final String PDF_URL =
      "{'type':'document','source':{'type':'url','url':'https://example.com/big.pdf'}}";
  private static final String CLAUDE_IMAGE_URL =
      "{'type':'image','source':{'type':'url','url':'https://example.com/cat.png'}}";
  private static final String CHAT_IMAGE_URL =
      "{'type':'image_url','image_url':{'url':'https://example.com/cat.png','detail':'high'}}";
  private static final String RESPONSES_IMAGE_URL =
      "{'type':'input_image','image_url':'https://example.com/cat.png'}";
  private static final String RESPONSES_FILE_URL =
      "{'type':'input_file','file_url':'https://example.com/big.pdf'}";
  private static final String CHAT_FILE_ID = "{'type':'file','file':{'file_id':'file-abc123'}}";
  private static final String CLAUDE_FILE_SOURCE =
      "{'type':'document','source':{'type':'file','file_id':'file_011abc'}}";
  private static final String RESPONSES_IMAGE_FILE_ID =
      "{'type':'input_image','file_id':'file-abc123'}";
  private static final String RESPONSES_INPUT_FILE_ID =
      "{'type':'input_file','file_id':'file-abc123'}";

  static Stream<Arguments> refusedByDefault() {
    return Stream.of(
        part(
            "an Anthropic document fetched from a URL",
            Route.ANTHROPIC,
            PDF_URL,
            "url_content",
            "messages[0].content[1].source.url"),
        part(
            "an Anthropic image fetched from a URL",
            Route.ANTHROPIC,
            CLAUDE_IMAGE_URL,
            "url_content",
            "messages[0].content[1].source.url"),
        part(
            "an Anthropic document read from the provider's file store",
            Route.ANTHROPIC,
            CLAUDE_FILE_SOURCE,
            "file_reference",
            "messages[0].content[1].source.file_id"),
        part(
            "an Anthropic image read from the file store without naming the file",
            Route.ANTHROPIC,
            "{'type':'image','source':{'type':'file'}}",
            "file_reference",
            "messages[0].content[1].source.type"),
        part(
            "an Anthropic container upload of a stored file",
            Route.ANTHROPIC,
            "{'type':'container_upload','file_id':'file_011abc'}",
            "file_reference",
            "messages[0].content[1].file_id"),
        part(
            "an Anthropic source type the gateway does not know",
            Route.ANTHROPIC,
            "{'type':'document','source':{'type':'ftp','url':'ftp://example.com/a.pdf'}}",
            "content_source",
            "messages[0].content[1].source.type"),
        part(
            "an Anthropic URL image inside a tool result",
            Route.ANTHROPIC,
            "{'type':'tool_result','tool_use_id':'t1','content':[" + CLAUDE_IMAGE_URL + "]}",
            "url_content",
            "messages[0].content[1].content[0].source.url"),
        part(
            "an Anthropic URL image inside a document made of blocks",
            Route.ANTHROPIC,
            "{'type':'document','source':{'type':'content','content':[" + CLAUDE_IMAGE_URL + "]}}",
            "url_content",
            "messages[0].content[1].source.content[0].source.url"),
        whole(
            "an Anthropic URL document in the system prompt",
            Route.ANTHROPIC,
            json(
                "{'model':'claude-opus-5-5','max_tokens':1000,'system':["
                    + PDF_URL
                    + "],"
                    + "'messages':[{'role':'user','content':'hi'}]}"),
            "url_content",
            "system[0].source.url"),
        part(
            "an OpenAI chat image fetched from an https URL",
            Route.CHAT,
            CHAT_IMAGE_URL,
            "url_content",
            "messages[0].content[1].image_url.url"),
        part(
            "an OpenAI chat image fetched from a plain http URL",
            Route.CHAT,
            "{'type':'image_url','image_url':{'url':'http://10.0.0.5/cat.png'}}",
            "url_content",
            "messages[0].content[1].image_url.url"),
        part(
            "an OpenAI chat image URL given as a bare string",
            Route.CHAT,
            "{'type':'image_url','image_url':'https://example.com/cat.png'}",
            "url_content",
            "messages[0].content[1].image_url"),
        part(
            "an OpenAI chat file read from the provider's file store",
            Route.CHAT,
            CHAT_FILE_ID,
            "file_reference",
            "messages[0].content[1].file.file_id"),
        whole(
            "an OpenAI chat assistant turn naming a stored audio answer",
            Route.CHAT,
            Route.CHAT.withConversation(
                "[{'role':'user','content':'hi'},"
                    + "{'role':'assistant','audio':{'id':'audio_abc123'}},{'role':'user','content':'again'}]"),
            "file_reference",
            "messages[1].audio.id"),
        part(
            "a Responses image fetched from a URL",
            Route.RESPONSES,
            RESPONSES_IMAGE_URL,
            "url_content",
            "input[0].content[1].image_url"),
        part(
            "a Responses image read from the file store",
            Route.RESPONSES,
            RESPONSES_IMAGE_FILE_ID,
            "file_reference",
            "input[0].content[1].file_id"),
        part(
            "a Responses file fetched from a URL",
            Route.RESPONSES,
            RESPONSES_FILE_URL,
            "url_content",
            "input[0].content[1].file_url"),
        part(
            "a Responses file read from the file store",
            Route.RESPONSES,
            RESPONSES_INPUT_FILE_ID,
            "file_reference",
            "input[0].content[1].file_id"),
        whole(
            "a Responses URL image inside a function call's output",
            Route.RESPONSES,
            Route.RESPONSES.withConversation(
                "[{'type':'function_call_output','call_id':'c1','output':["
                    + RESPONSES_IMAGE_URL
                    + "]}]"),
            "url_content",
            "input[0].output[0].image_url"));
  }

  @ParameterizedTest(name = "{0} is refused by default: {3} on {4}")
  @MethodSource("refusedByDefault")
  void contentByReferenceIsRefusedByDefault(
      String sentence, Route route, JsonNode body, String rule, String field) {
    Violation v = assertInstanceOf(Violation.class, route.decide(POLICY, body));
    assertEquals(rule, v.rule(), v.message());
    assertEquals(field, v.field(), v.message());
    assertEquals(400, v.httpStatus());
    assertTrue(v.message().contains(field), v.message());
    assertTrue(v.message().endsWith("(rule " + rule + ")"), v.message());
  }

  static Stream<Arguments> storedFilesWithEverySwitchOn() {
    return Stream.of(
        part(
            "an Anthropic file source",
            Route.ANTHROPIC,
            CLAUDE_FILE_SOURCE,
            "file_reference",
            "messages[0].content[1].source.file_id"),
        part(
            "an OpenAI chat file_id",
            Route.CHAT,
            CHAT_FILE_ID,
            "file_reference",
            "messages[0].content[1].file.file_id"),
        part(
            "a Responses input_image file_id",
            Route.RESPONSES,
            RESPONSES_IMAGE_FILE_ID,
            "file_reference",
            "input[0].content[1].file_id"),
        part(
            "a Responses input_file file_id",
            Route.RESPONSES,
            RESPONSES_INPUT_FILE_ID,
            "file_reference",
            "input[0].content[1].file_id"));
  }

  @ParameterizedTest(name = "{0} stays refused with every URL switch on")
  @MethodSource("storedFilesWithEverySwitchOn")
  void storedFilesHaveNoSwitch(
      String sentence, Route route, JsonNode body, String rule, String field) {
    Violation v = assertInstanceOf(Violation.class, route.decide(ALL_URLS_ALLOWED, body));
    assertEquals(rule, v.rule(), v.message());
    assertEquals(field, v.field(), v.message());
  }

  static Stream<Arguments> switchedPerKind() {
    return Stream.of(
        Arguments.of(
            "an Anthropic URL document with only images switched on",
            Route.ANTHROPIC,
            URL_IMAGES_ONLY,
            Route.ANTHROPIC.withPart(PDF_URL),
            "messages[0].content[1].source.url"),
        Arguments.of(
            "a Responses file URL with only images switched on",
            Route.RESPONSES,
            URL_IMAGES_ONLY,
            Route.RESPONSES.withPart(RESPONSES_FILE_URL),
            "input[0].content[1].file_url"),
        Arguments.of(
            "an Anthropic URL image with only documents switched on",
            Route.ANTHROPIC,
            URL_DOCUMENTS_ONLY,
            Route.ANTHROPIC.withPart(CLAUDE_IMAGE_URL),
            "messages[0].content[1].source.url"),
        Arguments.of(
            "an OpenAI chat URL image with only documents switched on",
            Route.CHAT,
            URL_DOCUMENTS_ONLY,
            Route.CHAT.withPart(CHAT_IMAGE_URL),
            "messages[0].content[1].image_url.url"),
        Arguments.of(
            "a Responses URL image with only documents switched on",
            Route.RESPONSES,
            URL_DOCUMENTS_ONLY,
            Route.RESPONSES.withPart(RESPONSES_IMAGE_URL),
            "input[0].content[1].image_url"));
  }

  @ParameterizedTest(name = "{0} is still refused")
  @MethodSource("switchedPerKind")
  void eachSwitchAllowsOnlyItsKind(
      String sentence, Route route, RequestPolicy policy, JsonNode body, String field) {
    Violation v = assertInstanceOf(Violation.class, route.decide(policy, body));
    assertEquals("url_content", v.rule(), v.message());
    assertEquals(field, v.field(), v.message());
  }

  /** What a row expects the estimate to add to the body's bytes. */
  enum Beyond {
    /** Nothing: the bytes bound the input. */
    BYTES,
    /** One image's {@code inline-image-tokens}. */
    ONE_IMAGE,
    /** The model's whole context window. */
    WHOLE_CONTEXT
  }

  static Stream<Arguments> inlineContent() {
    return Stream.of(
        Arguments.of(
            "an Anthropic base64 image",
            Route.ANTHROPIC,
            Route.ANTHROPIC.withPart(
                "{'type':'image','source':{'type':'base64','media_type':'image/png','data':'iVBORw0K'}}"),
            Beyond.ONE_IMAGE),
        Arguments.of(
            "an Anthropic base64 image inside a tool result",
            Route.ANTHROPIC,
            Route.ANTHROPIC.withConversation(
                "[{'role':'user','content':[{'type':'tool_result','tool_use_id':'t1','content':"
                    + "[{'type':'image','source':{'type':'base64','media_type':'image/png',"
                    + "'data':'iVBORw0K'}}]}]}]"),
            Beyond.ONE_IMAGE),
        Arguments.of(
            "an Anthropic base64 PDF",
            Route.ANTHROPIC,
            Route.ANTHROPIC.withPart(
                "{'type':'document','source':{'type':'base64','media_type':'application/pdf','data':'JVBERi0='}}"),
            Beyond.WHOLE_CONTEXT),
        Arguments.of(
            "an Anthropic plain-text document",
            Route.ANTHROPIC,
            Route.ANTHROPIC.withPart(
                "{'type':'document','source':{'type':'text','media_type':'text/plain','data':'notes'}}"),
            Beyond.BYTES),
        Arguments.of(
            "an Anthropic document made of text blocks",
            Route.ANTHROPIC,
            Route.ANTHROPIC.withPart(
                "{'type':'document','source':{'type':'content','content':"
                    + "[{'type':'text','text':'first'},{'type':'text','text':'second'}]}}"),
            Beyond.BYTES),
        Arguments.of(
            "an Anthropic search result naming its source URL only as a citation",
            Route.ANTHROPIC,
            Route.ANTHROPIC.withPart(
                "{'type':'search_result','source':'https://example.com/a','title':'A',"
                    + "'content':[{'type':'text','text':'quoted'}]}"),
            Beyond.BYTES),
        Arguments.of(
            "an OpenAI chat image as a data: URL",
            Route.CHAT,
            Route.CHAT.withPart(
                "{'type':'image_url','image_url':{'url':'data:image/png;base64,iVBORw0K'}}"),
            Beyond.ONE_IMAGE),
        Arguments.of(
            "an OpenAI chat image as an upper-case DATA: URL",
            Route.CHAT,
            Route.CHAT.withPart(
                "{'type':'image_url','image_url':{'url':'DATA:image/png;base64,iVBO'}}"),
            Beyond.ONE_IMAGE),
        Arguments.of(
            "an OpenAI chat file sent inline as file_data",
            Route.CHAT,
            Route.CHAT.withPart(
                "{'type':'file','file':{'filename':'a.pdf','file_data':'data:application/pdf;base64,JVBERi0='}}"),
            Beyond.WHOLE_CONTEXT),
        Arguments.of(
            "an OpenAI chat JSON schema with a file_id property (not content)",
            Route.CHAT,
            json(
                "{'model':'gpt-6.1-sol','messages':[{'role':'user','content':'hi'}],"
                    + "'response_format':{'type':'json_schema','json_schema':{'name':'f','schema':"
                    + "{'type':'object','properties':{'file_id':{'type':'string'},"
                    + "'image_url':{'type':'string'}}}}}}"),
            Beyond.BYTES),
        Arguments.of(
            "a Responses image as a data: URL",
            Route.RESPONSES,
            Route.RESPONSES.withPart(
                "{'type':'input_image','image_url':'data:image/png;base64,iVBORw0K'}"),
            Beyond.ONE_IMAGE),
        Arguments.of(
            "a Responses file sent inline as file_data",
            Route.RESPONSES,
            Route.RESPONSES.withPart(
                "{'type':'input_file','filename':'a.pdf','file_data':'data:application/pdf;base64,JVBERi0='}"),
            Beyond.WHOLE_CONTEXT));
  }

  /**
   * Inline content passes, and is reserved for what it can bill: an image by its pixels (a 226-byte
   * PNG can be 1092 x 1092), a document by its pages (its text sits in compressed streams), neither
   * by its bytes. Text stays at the byte estimate.
   */
  @ParameterizedTest(name = "{0} is allowed and reserved beyond its bytes: {3}")
  @MethodSource("inlineContent")
  void inlineContentIsReservedForWhatItCanBill(
      String sentence, Route route, JsonNode body, Beyond beyond) {
    Allowed a = assertInstanceOf(Allowed.class, route.decide(POLICY, body), sentence);
    long bodyTokens = (sizeOf(body) + LIMITS.bytesPerToken() - 1) / LIMITS.bytesPerToken();
    long searchTokens = a.worstCase().webSearchUses() * LIMITS.webSearchInputTokensPerUse();
    long expected =
        switch (beyond) {
          case BYTES -> bodyTokens;
          case ONE_IMAGE -> bodyTokens + LIMITS.inlineImageTokens();
          case WHOLE_CONTEXT -> a.modelInfo().contextLimit();
        };
    assertEquals(expected + searchTokens, a.worstCase().inputTokensAssumed(), sentence);
  }

  @Test
  void everyInlineImageIsCountedUpToTheContextWindow() {
    String image =
        "{'type':'image','source':{'type':'base64','media_type':'image/png','data':'iVBORw0K'}}";
    JsonNode three = Route.ANTHROPIC.withPart(image + "," + image + "," + image);
    Allowed a = assertInstanceOf(Allowed.class, Route.ANTHROPIC.decide(POLICY, three));
    long bodyTokens = (sizeOf(three) + LIMITS.bytesPerToken() - 1) / LIMITS.bytesPerToken();
    assertEquals(bodyTokens + 3 * LIMITS.inlineImageTokens(), a.worstCase().inputTokensAssumed());

    JsonNode many = Route.ANTHROPIC.withPart(String.join(",", Collections.nCopies(40, image)));
    Allowed full = assertInstanceOf(Allowed.class, Route.ANTHROPIC.decide(POLICY, many));
    assertEquals(model("claude-opus-5-5").contextLimit(), full.worstCase().inputTokensAssumed());
  }

  static Stream<Arguments> allowedBySwitch() {
    return Stream.of(
        Arguments.of(
            "an Anthropic URL document with documents on",
            Route.ANTHROPIC,
            URL_DOCUMENTS_ONLY,
            Route.ANTHROPIC.withPart(PDF_URL),
            "claude-opus-5-5"),
        Arguments.of(
            "an Anthropic URL image with images on",
            Route.ANTHROPIC,
            URL_IMAGES_ONLY,
            Route.ANTHROPIC.withPart(CLAUDE_IMAGE_URL),
            "claude-opus-5-5"),
        Arguments.of(
            "an OpenAI chat URL image with images on",
            Route.CHAT,
            URL_IMAGES_ONLY,
            Route.CHAT.withPart(CHAT_IMAGE_URL),
            "gpt-6.1-sol"),
        Arguments.of(
            "a Responses URL image with images on",
            Route.RESPONSES,
            URL_IMAGES_ONLY,
            Route.RESPONSES.withPart(RESPONSES_IMAGE_URL),
            "gpt-6.1-sol"),
        Arguments.of(
            "a Responses file URL with documents on",
            Route.RESPONSES,
            URL_DOCUMENTS_ONLY,
            Route.RESPONSES.withPart(RESPONSES_FILE_URL),
            "gpt-6.1-sol"));
  }

  @ParameterizedTest(name = "{0} is allowed and reserves the whole context window of {4}")
  @MethodSource("allowedBySwitch")
  void allowedUrlContentReservesTheWholeContextWindow(
      String sentence, Route route, RequestPolicy policy, JsonNode body, String modelName) {
    Allowed a = assertInstanceOf(Allowed.class, route.decide(policy, body), sentence);
    WorstCase w = a.worstCase();
    long searchTokens = w.webSearchUses() * LIMITS.webSearchInputTokensPerUse();
    assertEquals(model(modelName).contextLimit() + searchTokens, w.inputTokensAssumed());
    assertEquals(
        WorstCaseEstimator.of(LIMITS)
            .chat(
                model(modelName),
                sizeOf(body),
                UnsizedContent.wholeContextWindow(),
                w.outputTokensAssumed(),
                1,
                (int) w.webSearchUses())
            .micros(),
        w.micros());
  }

  @Test
  void theTrialProbesPdfCallReservesTheWholeClaudeContextInsteadOfItsBytes() {
    JsonNode body = Route.ANTHROPIC.withPart(PDF_URL);
    Allowed a = assertInstanceOf(Allowed.class, Route.ANTHROPIC.decide(URL_DOCUMENTS_ONLY, body));
    // 200,000 tokens at the dearest Opus input rate ($5/M cache write) + 1,000 output at $20/M.
    assertEquals(1_020_000, a.worstCase().micros());
  }

  @Test
  void switchesAreReadFromConfig() {
    PolicyLimits limits =
        PolicyLimits.fromMap(Map.of("allow-url-content", Map.of("documents", true)));
    JsonNode body = Route.ANTHROPIC.withPart(PDF_URL);
    assertInstanceOf(
        Allowed.class, Route.ANTHROPIC.decide(new RequestPolicy(CATALOG, limits), body));
  }

  private static RequestPolicy policy(UrlContent switches) {
    return new RequestPolicy(CATALOG, LIMITS.withUrlContent(switches));
  }

  private static Arguments part(
      String sentence, Route route, String part, String rule, String field) {
    return Arguments.of(sentence, route, route.withPart(part), rule, field);
  }

  private static Arguments whole(
      String sentence, Route route, JsonNode body, String rule, String field) {
    return Arguments.of(sentence, route, body, rule, field);
  }
}
