package dev.spendgateway.upstream.stream;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.upstream.usage.Json;
import java.util.Optional;
import org.apache.pekko.util.ByteString;

/** A non-streamed upstream body, collected up to {@code providers.max-response-bytes}. */
public sealed interface CollectedBody {

  /** The whole body. JSON is parsed only when asked ({@link #json()} parses on each call). */
  record Complete(ByteString bytes) implements CollectedBody {
    /** The body as JSON; empty when it is not JSON (an unreadable answer keeps the worst case). */
    public Optional<JsonNode> json() {
      return Json.parse(bytes.toArray());
    }
  }

  /** The body was larger than {@code limitBytes}; reading stopped there (connection closed). */
  record TooLarge(long limitBytes) implements CollectedBody {}

  /** The body could not be read to its end (cut). */
  record Failed(String safeErrorClass) implements CollectedBody {}
}
