package dev.spendgateway.upstream.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.upstream.Fixtures;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SseDecoderTest {

  private static final SseLimits LIMITS = new SseLimits(64 * 1024, 64 * 1024);

  private static List<SseEvent> decode(SseLimits limits, List<ByteString> chunks) {
    SseDecoder decoder = new SseDecoder(limits);
    List<SseEvent> events = new ArrayList<>();
    chunks.forEach(c -> events.addAll(decoder.feed(c)));
    events.addAll(decoder.finish());
    return events;
  }

  private static List<SseEvent> decode(String body) {
    return decode(LIMITS, List.of(ByteString.fromString(body)));
  }

  @Test
  void aRecordedAnthropicStreamGivesItsEightEventsInOrder() {
    List<SseEvent> events = decode(LIMITS, List.of(Fixtures.bytes(Fixtures.ANTHROPIC)));
    assertEquals(8, events.size());
    assertEquals("message_start", events.get(0).type());
    assertEquals("ping", events.get(2).type());
    assertEquals("{\"type\":\"message_stop\"}", events.get(7).data());
  }

  @ParameterizedTest(name = "chunks of {0} bytes decode like the whole body")
  @ValueSource(ints = {1, 2, 3, 7, 64, 1000})
  void eventsSplitAcrossChunksDecodeTheSame(int chunkSize) {
    for (String name :
        List.of(Fixtures.ANTHROPIC, Fixtures.OPENAI_CHAT, Fixtures.OPENAI_RESPONSES)) {
      ByteString body = Fixtures.bytes(name);
      assertEquals(
          decode(LIMITS, List.of(body)), decode(LIMITS, Fixtures.chunks(body, chunkSize)), name);
    }
  }

  @ParameterizedTest(name = "CRLF line ends, chunks of {0} bytes, decode like LF")
  @ValueSource(ints = {1, 5, 4096})
  void crlfLineEndsAreTheSameAsLf(int chunkSize) {
    ByteString body = Fixtures.bytes(Fixtures.OPENAI_CHAT);
    assertEquals(
        decode(LIMITS, List.of(body)),
        decode(LIMITS, Fixtures.chunks(Fixtures.crlf(body), chunkSize)));
  }

  @Test
  void bareCrEndsALineToo() {
    assertEquals(List.of(new SseEvent("a", "1")), decode("event: a\rdata: 1\r\r"));
  }

  @Test
  void commentsAndUnknownFieldsAreIgnored() {
    assertEquals(
        List.of(SseEvent.data("x")),
        decode(": keep-alive\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\n"));
  }

  @Test
  void aCommentOnlyBlockDispatchesNothing() {
    assertEquals(List.of(), decode(": ping\n\n: ping\n\n"));
  }

  @Test
  void multiLineDataIsJoinedWithNewlines() {
    assertEquals(List.of(SseEvent.data("a\nb\n")), decode("data: a\ndata:b\ndata\n\n"));
  }

  @Test
  void onlyOneSpaceAfterTheColonIsDropped() {
    assertEquals(List.of(SseEvent.data(" x")), decode("data:  x\n\n"));
  }

  @Test
  void anEventWithoutTheClosingBlankLineIsStillDispatchedAtTheEnd() {
    assertEquals(List.of(SseEvent.data("[DONE]")), decode("data: [DONE]\n"));
  }

  @Test
  void aHalfReceivedLineAtTheEndIsDropped() {
    assertEquals(List.of(SseEvent.data("1")), decode("data: 1\n\ndata: {\"trunc"));
  }

  @Test
  void anOversizedLineIsSkippedAndTheNextEventStillDecodes() {
    SseLimits small = new SseLimits(32, 64);
    String big = "data: " + "x".repeat(100) + "\n\n";
    SseDecoder decoder = new SseDecoder(small);
    List<SseEvent> events =
        new ArrayList<>(decoder.feed(ByteString.fromString(big + "data: ok\n\n")));
    assertEquals(List.of(SseEvent.data("ok")), events);
    assertEquals(1, decoder.malformed());
  }

  @Test
  void aNewlineFreeFloodIsDroppedNotBuffered() {
    SseLimits small = new SseLimits(32, 64);
    SseDecoder decoder = new SseDecoder(small);
    for (int i = 0; i < 10_000; i++) {
      assertTrue(decoder.feed(ByteString.fromString("x".repeat(100))).isEmpty());
    }
    assertEquals(1, decoder.malformed());
    assertEquals(
        List.of(SseEvent.data("ok")), decoder.feed(ByteString.fromString("\n\ndata: ok\n\n")));
  }

  @Test
  void anEventOverTheEventBoundIsSkippedWhole() {
    SseLimits small = new SseLimits(32, 40);
    String body =
        "event: big\ndata: 0123456789012345678\ndata: 0123456789012345678\n\ndata: ok\n\n";
    SseDecoder decoder = new SseDecoder(small);
    assertEquals(List.of(SseEvent.data("ok")), decoder.feed(ByteString.fromString(body)));
    assertEquals(1, decoder.malformed());
  }

  @Test
  void utf8SplitInsideACharacterSurvives() {
    ByteString body = ByteString.fromString("data: héllo ✓\n\n");
    assertEquals(List.of(SseEvent.data("héllo ✓")), decode(LIMITS, Fixtures.chunks(body, 1)));
  }
}
