package dev.spendgateway.edge.call;

import dev.spendgateway.edge.body.BodyMemory;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.policy.cost.CostCalculator;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.request.RequestPolicy;
import dev.spendgateway.upstream.client.UpstreamClient;
import dev.spendgateway.upstream.stream.StreamMeter;
import java.time.Clock;
import java.time.Duration;
import org.apache.pekko.stream.Materializer;

/**
 * Everything a provider call needs, built once at start and shared by all calls.
 *
 * @param policy request policy (pure)
 * @param cost actual-cost arithmetic (pure)
 * @param ledger the GlobalBudget, reached only through its client
 * @param upstream pooled provider connections
 * @param meter splits streamed answers into client bytes and a usage count
 * @param clock the time source (UTC day for the catalog's lifecycle checks)
 * @param materializer runs the per-call streams
 * @param bodyReadTimeout how long a caller may take to send its request body
 * @param metrics what calls report for {@code /metrics}
 * @param inFlight open streams and unanswered settles (a shutdown waits for them)
 * @param dataClasses which providers each kind of data may go to ({@code x-data-class})
 * @param bodyMemory the bytes of caller bodies held at once ({@code gateway.body-memory-share})
 */
public record CallServices(
    RequestPolicy policy,
    CostCalculator cost,
    LedgerClient ledger,
    UpstreamClient upstream,
    StreamMeter meter,
    Clock clock,
    Materializer materializer,
    Duration bodyReadTimeout,
    CallMetrics metrics,
    InFlightCalls inFlight,
    DataClasses dataClasses,
    BodyMemory bodyMemory) {

  /** Services whose calls may carry their data to every provider. */
  public CallServices(
      RequestPolicy policy,
      CostCalculator cost,
      LedgerClient ledger,
      UpstreamClient upstream,
      StreamMeter meter,
      Clock clock,
      Materializer materializer,
      Duration bodyReadTimeout,
      CallMetrics metrics,
      InFlightCalls inFlight) {
    this(
        policy,
        cost,
        ledger,
        upstream,
        meter,
        clock,
        materializer,
        bodyReadTimeout,
        metrics,
        inFlight,
        DataClasses.permissive(),
        BodyMemory.unbounded());
  }
}
