package dev.spendgateway.upstream.client;

import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/** The body sent upstream: JSON in memory, or a streamed form (multipart transcription). */
public sealed interface UpstreamBody {

  ContentType contentType();

  /** A body already in memory (the policy-checked, rewritten JSON). */
  record Strict(ContentType contentType, ByteString bytes) implements UpstreamBody {}

  /**
   * A streamed body, sent chunked, or with Content-Length when {@code length >= 0}. The source is
   * run once, by the connection pool.
   */
  record Streamed(ContentType contentType, long length, Source<ByteString, ?> bytes)
      implements UpstreamBody {}

  /**
   * The entity for one request. A body in memory is handed over once: Pekko's pool keeps the
   * request it sent until the response's last byte, minutes for a long stream, so an entity that
   * held the bytes would keep every open stream's prompt (up to the 4 MiB policy limit) in the
   * heap. The entity's source gives its bytes away when the connection takes them; the gateway's
   * own resend of a request that never left builds a new entity from {@code body}.
   */
  static RequestEntity toEntity(UpstreamBody body) {
    if (body instanceof Strict strict) {
      if (strict.bytes().isEmpty()) {
        return HttpEntities.create(strict.contentType(), strict.bytes());
      }
      AtomicReference<ByteString> once = new AtomicReference<>(strict.bytes());
      Source<ByteString, NotUsed> handedOver =
          Source.fromIterator(
              () -> {
                ByteString bytes = once.getAndSet(null);
                return bytes == null ? Collections.emptyIterator() : List.of(bytes).iterator();
              });
      return HttpEntities.create(strict.contentType(), strict.bytes().size(), handedOver);
    }
    Streamed streamed = (Streamed) body;
    return streamed.length() >= 0
        ? HttpEntities.create(streamed.contentType(), streamed.length(), streamed.bytes())
        : HttpEntities.create(streamed.contentType(), streamed.bytes());
  }
}
