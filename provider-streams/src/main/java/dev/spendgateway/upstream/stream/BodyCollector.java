package dev.spendgateway.upstream.stream;

import dev.spendgateway.upstream.client.SafeErrors;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.StreamLimitReachedException;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/** Collects a non-streamed answer into memory, bounded. */
public final class BodyCollector {

  private BodyCollector() {}

  /**
   * Reads {@code body} to its end, at most {@code maxBytes} ({@code providers.max-response-bytes}).
   * Never completes exceptionally: over the bound → {@link CollectedBody.TooLarge}, a cut → {@link
   * CollectedBody.Failed}.
   */
  public static CompletionStage<CollectedBody> collect(
      Source<ByteString, ?> body, long maxBytes, Materializer materializer) {
    return body.limitWeighted(maxBytes, chunk -> (long) chunk.size())
        .runFold(ByteString.emptyByteString(), ByteString::concat, materializer)
        .handle((bytes, error) -> error == null ? complete(bytes) : failed(error, maxBytes));
  }

  private static CollectedBody complete(ByteString bytes) {
    return new CollectedBody.Complete(bytes.compact());
  }

  private static CollectedBody failed(Throwable error, long maxBytes) {
    Throwable cause = SafeErrors.unwrap(error);
    if (cause instanceof StreamLimitReachedException) {
      return new CollectedBody.TooLarge(maxBytes);
    }
    return new CollectedBody.Failed(SafeErrors.classify(cause));
  }
}
