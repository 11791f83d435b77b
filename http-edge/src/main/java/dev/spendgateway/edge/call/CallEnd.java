package dev.spendgateway.edge.call;

import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;

/**
 * How a call ended, as a value the {@link CallPipeline} turns into the caller's answer and the
 * call's access line, in one place.
 */
public sealed interface CallEnd {
  /** Headers added to whatever the caller gets (the router's provider and failover headers). */
  List<HttpHeader> headers();

  /** The gateway answered the call itself: the call's own line records it. */
  record Refused(Refusal refusal, List<HttpHeader> headers) implements CallEnd {
    public Refused(Refusal refusal) {
      this(refusal, List.of());
    }
  }

  /**
   * An attempt answered the call (the provider's answer, passed on or translated, or what the
   * gateway made of it): {@code attempt}'s own line records it, so the call writes none.
   */
  record Answered(HttpResponse response, CallAttempt attempt, List<HttpHeader> headers)
      implements CallEnd {}
}
