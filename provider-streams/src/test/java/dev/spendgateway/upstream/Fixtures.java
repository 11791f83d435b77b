package dev.spendgateway.upstream;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.util.ByteString;

/** Recorded provider sessions from {@code src/test/resources/fixtures}. */
public final class Fixtures {

  public static final String ANTHROPIC = "anthropic-messages.sse";
  public static final String ANTHROPIC_WEB_SEARCH = "anthropic-messages-web-search.sse";
  public static final String OPENAI_CHAT = "openai-chat.sse";
  public static final String OPENAI_RESPONSES = "openai-responses.sse";

  private Fixtures() {}

  public static ByteString bytes(String name) {
    try (InputStream in = Fixtures.class.getResourceAsStream("/fixtures/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no fixture " + name);
      }
      return ByteString.fromArray(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The body cut into pieces of {@code size} bytes (the last may be shorter). */
  public static List<ByteString> chunks(ByteString body, int size) {
    List<ByteString> out = new ArrayList<>();
    for (int i = 0; i < body.size(); i += size) {
      out.add(body.slice(i, Math.min(body.size(), i + size)));
    }
    return out;
  }

  public static ByteString crlf(ByteString body) {
    return ByteString.fromString(body.utf8String().replace("\n", "\r\n"));
  }

  /** The body up to (not including) the first occurrence of {@code marker}. */
  public static ByteString until(ByteString body, String marker) {
    String text = body.utf8String();
    return ByteString.fromString(text.substring(0, text.indexOf(marker)));
  }
}
