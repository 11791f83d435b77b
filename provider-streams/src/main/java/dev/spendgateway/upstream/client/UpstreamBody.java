package dev.spendgateway.upstream.client;

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

  static RequestEntity toEntity(UpstreamBody body) {
    if (body instanceof Strict strict) {
      return HttpEntities.create(strict.contentType(), strict.bytes());
    }
    Streamed streamed = (Streamed) body;
    return streamed.length() >= 0
        ? HttpEntities.create(streamed.contentType(), streamed.length(), streamed.bytes())
        : HttpEntities.create(streamed.contentType(), streamed.bytes());
  }
}
