package dev.spendgateway.edge.call;

import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.policy.dataclass.DataClass;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * What differs between the calls the {@link CallPipeline} runs: a pass-through route's one target,
 * or the failover router's loop over its profile's targets. The pipeline owns every step around
 * them; a target reads and vets its body and decides where the call goes and what the caller gets.
 *
 * @param <P> what vetting the body gives (the call ready to go)
 */
public interface CallTarget<P> {
  /** The route, for the access line and the overhead metric. */
  String route();

  /** The error dialect of every answer the gateway makes on this route. */
  Shape errorShape();

  /** Which declared body types are a 415 before the body is read. */
  BodyType bodyType();

  /** The largest body this route reads: what the body memory holds for a body of unknown size. */
  long bodyLimit();

  /** The call's line on arrival, with what the route alone tells (e.g. its provider). */
  default AccessLine arrived(AccessLine line) {
    return line;
  }

  /**
   * Whether the call's data class may go where this route sends it, decided before the body is
   * read; empty when it may, or when the target decides later (the router, per target).
   */
  Optional<Refusal> refusesDataClass(DataClass dataClass, CallMetrics metrics);

  /**
   * Reads and vets the body: the call ready to go, or its refusal. Never a failed stage for bad
   * input.
   */
  CompletionStage<Vetted<P>> prepare(Call call);

  /** Makes the call's attempts and says how it ended. */
  CompletionStage<CallEnd> run(Call call, P prepared);

  /** What vetting a body gave. */
  sealed interface Vetted<P> {
    record Ready<P>(P prepared) implements Vetted<P> {}

    record Refused<P>(Refusal refusal) implements Vetted<P> {}
  }
}
