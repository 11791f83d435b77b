package dev.spendgateway.sim;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the simulator does with one call. A script is a queue of these per route; an empty queue
 * means {@link Normal} with the configured defaults. Every variant is a plain record so scripts
 * read as data and can be sent over HTTP (see {@link FaultJson}).
 */
public sealed interface Fault {

  /** Short name used in recordings and in the HTTP scripting API ({@code "kind"}). */
  String kind();

  /** A normal, well-formed answer, optionally with its own usage and extra latency. */
  record Normal(Optional<Usage> usage, Duration latency) implements Fault {
    public Normal {
      Objects.requireNonNull(usage, "usage");
      Objects.requireNonNull(latency, "latency");
    }

    @Override
    public String kind() {
      return "normal";
    }
  }

  /**
   * Any HTTP status with extra headers and a body. An empty body means the provider's own error
   * JSON for that status (OpenAI {@code {"error":{…}}}, Anthropic {@code {"type":"error",…}}).
   */
  record Status(int status, Map<String, String> headers, Optional<String> body) implements Fault {
    public Status {
      if (status < 100 || status > 599) {
        throw new IllegalArgumentException("status out of range: " + status);
      }
      headers = Map.copyOf(headers);
      Objects.requireNonNull(body, "body");
    }

    @Override
    public String kind() {
      return "status";
    }
  }

  /** The TCP connection is aborted (RST) before any response byte: clients see an IOException. */
  record ConnectionReset() implements Fault {
    @Override
    public String kind() {
      return "reset";
    }
  }

  /**
   * A 200 whose body stops after {@code afterEvents} SSE events (for a JSON answer: after half its
   * bytes). {@code abort=true} resets the connection (a network cut: the client sees an IO error);
   * {@code abort=false} ends the body cleanly but without the final events (no {@code message_stop}
   * / {@code [DONE]}), which only a careful reader notices.
   */
  record StreamCut(int afterEvents, boolean abort) implements Fault {
    public StreamCut {
      if (afterEvents < 0) {
        throw new IllegalArgumentException("afterEvents must be >= 0");
      }
    }

    @Override
    public String kind() {
      return "streamCut";
    }
  }

  /** A normal answer whose SSE events arrive {@code interval} apart (JSON: delayed by it). */
  record SlowDrip(Duration interval) implements Fault {
    public SlowDrip {
      Objects.requireNonNull(interval, "interval");
    }

    @Override
    public String kind() {
      return "slowDrip";
    }
  }

  /**
   * A 200 stream whose event number {@code afterEvents} (0-based) carries a data line that is not
   * JSON; the stream then ends. For a JSON request it behaves like {@link InvalidJson}.
   */
  record MalformedSse(int afterEvents) implements Fault {
    public MalformedSse {
      if (afterEvents < 0) {
        throw new IllegalArgumentException("afterEvents must be >= 0");
      }
    }

    @Override
    public String kind() {
      return "malformedSse";
    }
  }

  /**
   * A 200 stream that, after {@code afterEvents} events, carries the provider's in-stream error
   * event for {@code status} and ends: Anthropic {@code event: error} with {@code
   * {"type":"error","error":{…}}} (e.g. overloaded_error mid-answer), OpenAI a {@code data:
   * {"error":{…}}} line. For a JSON request it behaves like {@link Status}.
   */
  record StreamError(int afterEvents, int status) implements Fault {
    public StreamError {
      if (afterEvents < 0) {
        throw new IllegalArgumentException("afterEvents must be >= 0");
      }
      if (status < 400 || status > 599) {
        throw new IllegalArgumentException("status out of range: " + status);
      }
    }

    @Override
    public String kind() {
      return "streamError";
    }
  }

  /** A 200 with {@code content-type: application/json} and a body that is not valid JSON. */
  record InvalidJson() implements Fault {
    @Override
    public String kind() {
      return "invalidJson";
    }
  }

  /**
   * A normal answer (JSON, or SSE for a streamed call) compressed with gzip and labelled {@code
   * content-encoding: gzip}, whatever the request's {@code accept-encoding} asked for — as a
   * provider or a proxy in front of it may do. SSE events are flushed one by one, still streaming.
   */
  record Gzip() implements Fault {
    @Override
    public String kind() {
      return "gzip";
    }
  }

  // ---- factories: the names tests read best with ----

  static Normal normal() {
    return new Normal(Optional.empty(), Duration.ZERO);
  }

  static Normal usage(Usage usage) {
    return new Normal(Optional.of(usage), Duration.ZERO);
  }

  static Normal delayed(Duration latency) {
    return new Normal(Optional.empty(), latency);
  }

  static Status status(int status) {
    return new Status(status, Map.of(), Optional.empty());
  }

  static Status status(int status, Map<String, String> headers) {
    return new Status(status, headers, Optional.empty());
  }

  static Status status(int status, Map<String, String> headers, String body) {
    return new Status(status, headers, Optional.of(body));
  }

  /** 429 with {@code retry-after} in seconds and the provider's rate-limit error body. */
  static Status rateLimited(int retryAfterSeconds) {
    return status(429, Map.of("retry-after", Integer.toString(retryAfterSeconds)));
  }

  /** Anthropic's 400 for an empty prepaid balance, which the gateway fails over on. */
  static Status creditBalanceTooLow() {
    return status(
        400,
        Map.of(),
        "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":"
            + "\"Your credit balance is too low to access the Anthropic API. Please go to Plans &"
            + " Billing to upgrade or purchase credits.\"}}");
  }

  /** Anthropic's 529 overloaded_error. */
  static Status overloaded() {
    return status(529);
  }

  static ConnectionReset connectionReset() {
    return new ConnectionReset();
  }

  static StreamCut streamCut(int afterEvents) {
    return new StreamCut(afterEvents, true);
  }

  static StreamCut streamTruncated(int afterEvents) {
    return new StreamCut(afterEvents, false);
  }

  static SlowDrip slowDrip(Duration interval) {
    return new SlowDrip(interval);
  }

  static MalformedSse malformedSse(int afterEvents) {
    return new MalformedSse(afterEvents);
  }

  static StreamError streamError(int afterEvents, int status) {
    return new StreamError(afterEvents, status);
  }

  static InvalidJson invalidJson() {
    return new InvalidJson();
  }

  static Gzip gzip() {
    return new Gzip();
  }

  // ---- what real providers do on long calls: pauses inside a stream, usage never reported ----

  /**
   * A normal stream that goes silent for {@code pause} after its first {@code afterEvents} events,
   * then sends the rest: a reasoning model thinking between two events. Real pauses last minutes;
   * tests use seconds. For a JSON request the pause comes before the response headers instead.
   */
  record StreamPause(int afterEvents, Duration pause) implements Fault {
    public StreamPause {
      if (afterEvents < 0) {
        throw new IllegalArgumentException("afterEvents must be >= 0");
      }
      Objects.requireNonNull(pause, "pause");
      if (pause.isNegative()) {
        throw new IllegalArgumentException("pause must be >= 0");
      }
    }

    @Override
    public String kind() {
      return "streamPause";
    }
  }

  /**
   * A complete, cleanly ended answer in which the provider never reports the final usage:
   * Anthropic's {@code message_delta} has no {@code usage} (only {@code message_start} had any), a
   * chat stream ends with {@code [DONE]} but no usage chunk although {@code include_usage} was
   * asked, the Responses API's {@code response.completed} carries {@code usage: null}. A JSON
   * answer has no {@code usage} field. A gateway can only keep its worst case for such an answer.
   */
  record UsageMissing() implements Fault {
    @Override
    public String kind() {
      return "usageMissing";
    }
  }

  /**
   * A normal stream that goes silent after its first {@code afterEvents} events until the held
   * streams are released ({@code ProviderSimulator.releaseHeld()}, {@code POST /_sim/release}) or
   * {@code maxHold} passes, then sends the rest. For capacity tests: hold N streams open however
   * long it takes to open them all on a loaded machine, check they are all open at once, then let
   * them finish. For a JSON request the hold comes before the response headers.
   */
  record StreamHold(int afterEvents, Duration maxHold) implements Fault {
    public StreamHold {
      if (afterEvents < 0) {
        throw new IllegalArgumentException("afterEvents must be >= 0");
      }
      Objects.requireNonNull(maxHold, "maxHold");
      if (maxHold.isNegative() || maxHold.isZero()) {
        throw new IllegalArgumentException("maxHold must be > 0");
      }
    }

    @Override
    public String kind() {
      return "streamHold";
    }
  }

  static StreamHold streamHold(int afterEvents, Duration maxHold) {
    return new StreamHold(afterEvents, maxHold);
  }

  static StreamPause streamPause(int afterEvents, Duration pause) {
    return new StreamPause(afterEvents, pause);
  }

  static UsageMissing usageMissing() {
    return new UsageMissing();
  }
}
