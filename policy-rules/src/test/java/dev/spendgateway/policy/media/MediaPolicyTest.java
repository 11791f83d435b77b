package dev.spendgateway.policy.media;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.request.MediaDecision;
import dev.spendgateway.policy.request.MediaRules;
import dev.spendgateway.policy.request.PolicyDecision;
import java.io.File;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The media catalog as shipped, the submit policy and the price of a finished job. */
class MediaPolicyTest {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final File CONF_DIR = new File(System.getProperty("gateway.conf.dir", "../conf"));
  private static final long FILE_LIMIT = 25L * 1024 * 1024;

  private static final MediaCatalog CATALOG =
      MediaCatalog.of(
          List.of(
              new MediaModel(
                  "sora-2", Map.of("720x1280", 100_000L, "1280x720", 100_000L), List.of(4, 8, 12)),
              new MediaModel(
                  "sora-2-pro",
                  Map.of(
                      "720x1280", 300_000L,
                      "1280x720", 300_000L,
                      "1024x1792", 500_000L,
                      "1792x1024", 500_000L),
                  List.of(4, 8, 12))));

  private static final MediaRules RULES = new MediaRules(CATALOG, FILE_LIMIT);

  private static JsonNode json(String text) {
    try {
      return MAPPER.readTree(text.replace('\'', '"'));
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  @Test
  void theShippedCatalogHoldsTheSeededPrices() {
    Config config = ConfigFactory.parseFile(new File(CONF_DIR, "models.conf")).resolve();
    MediaCatalog shipped =
        MediaCatalog.fromMap(config.getConfig("media-models").root().unwrapped());
    assertEquals(CATALOG.all(), shipped.all());
  }

  @ParameterizedTest(name = "{0} is reserved at {1} micro-dollars")
  @CsvSource(
      delimiter = '|',
      value = {
        "{'model':'sora-2','prompt':'a cat','seconds':'8','size':'720x1280'}      | 800000",
        "{'model':'sora-2','prompt':'a cat','seconds':8,'size':'1280x720'}        | 800000",
        "{'model':'sora-2','prompt':'a cat','seconds':'4','size':'720x1280'}      | 400000",
        "{'model':'sora-2-pro','prompt':'a cat','seconds':'12','size':'720x1280'} | 3600000",
        "{'model':'sora-2-pro','prompt':'a cat','seconds':'4','size':'1792x1024'} | 2000000",
        // No size: the dearest tier; no seconds: the longest clip, since the provider picks.
        "{'model':'sora-2-pro','prompt':'a cat','seconds':'4'}                    | 2000000",
        "{'model':'sora-2','prompt':'a cat','size':'720x1280'}                    | 1200000",
      })
  void anAllowedSubmitReservesSecondsTimesPrice(String body, long micros) {
    MediaDecision d = RULES.check(MediaRules.Submit.fromJson(json(body)));
    MediaDecision.Allowed allowed = assertInstanceOf(MediaDecision.Allowed.class, d);
    assertEquals(micros, allowed.worstCaseMicros());
  }

  @ParameterizedTest(name = "{0} is refused by rule {1} on field {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{'prompt':'a cat','seconds':'8'}                                     | media_model_required  | model",
        "{'model':'gpt-6.1-sol','prompt':'a cat','seconds':'8'}               | model_allow_list      | model",
        "{'model':'sora-2','seconds':'8'}                                     | media_prompt_required | prompt",
        "{'model':'sora-2','prompt':' ','seconds':'8'}                        | media_prompt_required | prompt",
        "{'model':'sora-2','prompt':'a cat','seconds':'8','size':'1792x1024'} | media_size            | size",
        "{'model':'sora-2','prompt':'a cat','seconds':'10'}                   | media_seconds         | seconds",
        "{'model':'sora-2','prompt':'a cat','seconds':'eight'}                | media_seconds         | seconds",
        "{'model':'sora-2','prompt':'a cat','seconds':8.5}                    | media_seconds         | seconds",
        "{'model':'sora-2','prompt':'a cat','seconds':true}                   | media_seconds         | seconds",
        "{'model':'sora-2','prompt':'a cat','seconds':'-4'}                   | media_seconds         | seconds",
        "{'model':'sora-2','prompt':'a cat','seconds':'8','remix_of':'v_1'}   | unknown_field         | remix_of",
      })
  void aSubmitBreakingARuleIsRefusedNamingIt(String body, String rule, String field) {
    MediaDecision d = RULES.check(MediaRules.Submit.fromJson(json(body)));
    PolicyDecision.Violation v = assertInstanceOf(PolicyDecision.Violation.class, d);
    assertEquals(rule, v.rule());
    assertEquals(field, v.field());
    assertEquals(400, v.httpStatus());
    assertTrue(v.message().endsWith("(rule " + rule + ")"), v.message());
  }

  @ParameterizedTest(name = "an input_reference of {0} bytes is {1}")
  @CsvSource({"1024, allowed", "26214400, allowed", "26214401, refused"})
  void anInputReferenceImageIsHeldToTheFileLimit(long bytes, String outcome) {
    MediaRules.Submit submit =
        new MediaRules.Submit(
            java.util.Optional.of("sora-2"),
            java.util.Optional.of("a cat"),
            java.util.Optional.of(json("'8'")),
            java.util.Optional.of("720x1280"),
            OptionalLong.of(bytes),
            List.of("model", "prompt", "seconds", "size", "input_reference"));
    MediaDecision d = RULES.check(submit);
    if (outcome.equals("allowed")) {
      assertInstanceOf(MediaDecision.Allowed.class, d);
    } else {
      PolicyDecision.Violation v = assertInstanceOf(PolicyDecision.Violation.class, d);
      assertEquals("file_size", v.rule());
      assertEquals(413, v.httpStatus());
    }
  }

  @ParameterizedTest(name = "a job reserved as {0} that ends as {1} is billed {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        // The finished job's own seconds and size are what the provider bills.
        "{'model':'sora-2','prompt':'p','seconds':'8','size':'720x1280'}     | {'status':'completed','seconds':'8','size':'720x1280'}    | 800000",
        "{'model':'sora-2','prompt':'p','seconds':'12','size':'720x1280'}    | {'status':'completed','seconds':'4','size':'720x1280'}    | 400000",
        "{'model':'sora-2-pro','prompt':'p','seconds':'8'}                   | {'status':'completed','seconds':'8','size':'1280x720'}    | 2400000",
        "{'model':'sora-2-pro','prompt':'p','seconds':'8'}                   | {'status':'completed','seconds':8,'size':'1024x1792'}     | 4000000",
        // A size the catalog does not know is billed at the reserved (dearest) price.
        "{'model':'sora-2-pro','prompt':'p','seconds':'8'}                   | {'status':'completed','seconds':'8','size':'640x640'}     | 4000000",
        // No seconds on the finished job: the reserved length.
        "{'model':'sora-2','prompt':'p','seconds':'8','size':'720x1280'}     | {'status':'completed','size':'720x1280'}                  | 800000",
        "{'model':'sora-2','prompt':'p','seconds':'8','size':'720x1280'}     | {'status':'failed','seconds':'8'}                         | 0",
        "{'model':'sora-2','prompt':'p','seconds':'8','size':'720x1280'}     | {'status':'in_progress','seconds':'8'}                    | -1",
        "{'model':'sora-2','prompt':'p','seconds':'8','size':'720x1280'}     | {'status':'queued'}                                       | -1",
      })
  void aFinishedJobIsBilledItsSecondsAtItsSizePrice(String submit, String job, long billed) {
    MediaDecision.Allowed reserved =
        (MediaDecision.Allowed) RULES.check(MediaRules.Submit.fromJson(json(submit)));
    OptionalLong micros = MediaRules.billedMicros(reserved, json(job));
    assertEquals(billed < 0 ? OptionalLong.empty() : OptionalLong.of(billed), micros);
  }

  @ParameterizedTest(name = "a job {0} reserved at {1} is billed {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{'status':'completed','model':'sora-2','seconds':'8','size':'720x1280'}        | 1200000 | 800000",
        "{'status':'completed','model':'sora-2-pro','seconds':4,'size':'1792x1024'}     | 6000000 | 2000000",
        // What the catalog cannot price is kept at the reserved amount.
        "{'status':'completed','model':'sora-3','seconds':'8','size':'720x1280'}        | 1200000 | 1200000",
        "{'status':'completed','model':'sora-2','seconds':'8','size':'640x640'}         | 1200000 | 1200000",
        "{'status':'completed','model':'sora-2','size':'720x1280'}                      | 1200000 | 1200000",
        "{'status':'failed','model':'sora-2','seconds':'8','size':'720x1280'}           | 1200000 | 0",
        "{'status':'in_progress','model':'sora-2','seconds':'8','size':'720x1280'}      | 1200000 | -1",
      })
  void aJobSeenOnlyWithItsReservedAmountIsBilledFromTheCatalog(
      String job, long reserved, long billed) {
    assertEquals(
        billed < 0 ? OptionalLong.empty() : OptionalLong.of(billed),
        MediaRules.billedMicros(CATALOG, json(job), reserved));
  }

  @ParameterizedTest(name = "catalog entry {0} is refused: {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{'m':{'seconds':[4]}}                                   | usd-per-second",
        "{'m':{'usd-per-second':{'720x1280':'0.10'}}}            | seconds",
        "{'m':{'usd-per-second':{'720x1280':'0.1000001'}},'x':1} | six decimals",
        "{'m':{'usd-per-second':{'720x1280':'0.10'},'seconds':[0]}} | seconds",
      })
  void aBadCatalogEntryFailsNamingTheKey(String entry, String named) {
    @SuppressWarnings("unchecked")
    Map<String, Object> root = MAPPER.convertValue(json(entry), Map.class);
    root.remove("x");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> MediaCatalog.fromMap(root));
    assertTrue(e.getMessage().contains(named), e.getMessage());
  }
}
