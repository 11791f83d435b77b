package dev.spendgateway.edge.call;

import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.access.LedgerId;
import dev.spendgateway.policy.access.RandomIds;
import dev.spendgateway.policy.access.SpendTag;
import dev.spendgateway.policy.money.UsdAmount;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * Reads the spend headers every provider call carries (docs/ARCHITECTURE.md, "The contract") into a
 * {@link SpendContext}, or names the first header that is missing or malformed. Pure: the caller
 * passes a header lookup.
 *
 * <p>Two id rules, on purpose. The brand or preview id is a ledger key: it must obey {@link
 * LedgerId}, the rule the ledger API, {@code /usage?brand=} and the admin routes apply, or a brand
 * could spend under a name no operator can look up or credit. {@code x-request-id} and {@code
 * x-conversation-id} are correlation ids minted by other systems (tracing ids, base64 with {@code
 * +/=}, paths with {@code /}); they are only echoed, logged as JSON strings and kept in memory for
 * conversation stickiness, never booked or put in a URL, so they keep the wider rule below.
 */
public final class SpendHeaders {
  public static final String LANE = "x-spend-lane";
  public static final String BRAND = "x-spend-brand";
  public static final String BRAND_MONTHLY = "x-spend-brand-monthly-usd";
  public static final String BRAND_DAILY = "x-spend-brand-daily-usd";
  public static final String REQUEST_ID = "x-request-id";
  public static final String CONVERSATION_ID = "x-conversation-id";
  public static final String PRIORITY = "x-priority";
  public static final String TAG = "x-spend-tag";

  /** Correlation ids end up in logs and response headers: keep them short and inert. */
  private static final Pattern SAFE_ID = Pattern.compile("[A-Za-z0-9._:@/+=-]{1,128}");

  private SpendHeaders() {}

  /** Whether a call is interactive (default) or batch work; they get separate pools. */
  public enum Priority {
    INTERACTIVE,
    BATCH
  }

  /**
   * @param subject brand id ({@code app}) or preview id ({@code trial}); null for {@code free}
   * @param brandDailyMicros the brand's daily cap ({@code app} only, else 0)
   * @param brandMonthlyMicros the brand's monthly cap ({@code app} only, else 0)
   * @param tag the caller's workflow tag ({@code x-spend-tag}), journaled with the reservation
   */
  public record SpendContext(
      Lane lane,
      String subject,
      long brandDailyMicros,
      long brandMonthlyMicros,
      String requestId,
      Optional<String> conversationId,
      Priority priority,
      Optional<String> tag) {

    /** Without a workflow tag. */
    public SpendContext(
        Lane lane,
        String subject,
        long brandDailyMicros,
        long brandMonthlyMicros,
        String requestId,
        Optional<String> conversationId,
        Priority priority) {
      this(
          lane,
          subject,
          brandDailyMicros,
          brandMonthlyMicros,
          requestId,
          conversationId,
          priority,
          Optional.empty());
    }

    /**
     * The reservation this call asks the ledger for: {@code amountMicros} under {@code id}. Without
     * a model or provider: each attempt names its own ({@link ReserveRequest#forModel}).
     */
    public ReserveRequest reserve(String id, long amountMicros) {
      return new ReserveRequest(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          tag.orElse(null),
          null,
          null);
    }
  }

  /** The first problem found, naming the header. */
  public record HeaderViolation(String header, String message) {}

  /** Either a context or a violation; exactly one is present. */
  public record Result(Optional<SpendContext> context, Optional<HeaderViolation> violation) {
    static Result ok(SpendContext c) {
      return new Result(Optional.of(c), Optional.empty());
    }

    static Result bad(String header, String message) {
      return new Result(Optional.empty(), Optional.of(new HeaderViolation(header, message)));
    }
  }

  /**
   * The caller's {@code x-request-id} when well-formed, else a fresh one — so even a call refused
   * for its spend headers is echoed and logged under an id.
   */
  public static String requestId(Function<String, Optional<String>> header) {
    return header
        .apply(REQUEST_ID)
        .filter(id -> SAFE_ID.matcher(id).matches())
        .orElseGet(RandomIds::uuid);
  }

  /** The headers that decide who pays and how much: each must come at most once. */
  static final java.util.List<String> SPEND_HEADERS =
      java.util.List.of(
          LANE, BRAND, BRAND_MONTHLY, BRAND_DAILY, REQUEST_ID, CONVERSATION_ID, PRIORITY, TAG);

  /**
   * Like {@link #read(Function)}, from every value of each header: a spend header sent twice is
   * refused, not resolved by picking one — two readers (a proxy, the gateway) could pick
   * differently and bill a different brand than the one that was checked.
   */
  public static Result readAll(Function<String, List<String>> headerValues) {
    for (String name : SPEND_HEADERS) {
      int count = headerValues.apply(name).size();
      if (count > 1) {
        return Result.bad(name, name + " was sent " + count + " times; send it once");
      }
    }
    return read(name -> headerValues.apply(name).stream().findFirst());
  }

  /** {@link #readAll(Function)} over a request's headers (names match case-insensitively). */
  public static Result readAll(HttpRequest request) {
    return readAll(name -> valuesOf(request.getHeaders(), name));
  }

  /** Every value of header {@code name}, in arrival order. */
  public static List<String> valuesOf(Iterable<HttpHeader> headers, String name) {
    List<String> values = new ArrayList<>(1);
    for (HttpHeader h : headers) {
      if (h.is(name)) {
        values.add(h.value());
      }
    }
    return values;
  }

  /** Reads one value per header; private so no route can skip the once-only check of readAll. */
  private static Result read(Function<String, Optional<String>> header) {
    Optional<String> requestIdHeader = header.apply(REQUEST_ID);
    if (requestIdHeader.isPresent() && !SAFE_ID.matcher(requestIdHeader.get()).matches()) {
      return Result.bad(REQUEST_ID, "x-request-id must be 1-128 characters of [A-Za-z0-9._:@/+=-]");
    }
    String requestId = requestIdHeader.orElseGet(RandomIds::uuid);

    Optional<String> conversation = header.apply(CONVERSATION_ID);
    if (conversation.isPresent() && !SAFE_ID.matcher(conversation.get()).matches()) {
      return Result.bad(
          CONVERSATION_ID, "x-conversation-id must be 1-128 characters of [A-Za-z0-9._:@/+=-]");
    }

    // Optional; a malformed one is refused rather than dropped, or the caller's spend would be
    // reported under no workflow without anyone noticing.
    Optional<String> tag = header.apply(TAG);
    if (tag.isPresent() && !SpendTag.isValid(tag.get())) {
      return Result.bad(TAG, "x-spend-tag must be " + SpendTag.DESCRIPTION);
    }

    Priority priority = Priority.INTERACTIVE;
    Optional<String> priorityHeader = header.apply(PRIORITY);
    if (priorityHeader.isPresent()) {
      switch (priorityHeader.get()) {
        case "interactive" -> priority = Priority.INTERACTIVE;
        case "batch" -> priority = Priority.BATCH;
        default -> {
          return Result.bad(PRIORITY, "x-priority must be `interactive` or `batch`");
        }
      }
    }

    Optional<String> laneHeader = header.apply(LANE);
    if (laneHeader.isEmpty()) {
      return Result.bad(LANE, "x-spend-lane is required: one of app, trial, free");
    }
    Optional<Lane> lane = Lane.fromWireName(laneHeader.get());
    if (lane.isEmpty()) {
      return Result.bad(LANE, "x-spend-lane must be one of app, trial, free");
    }

    // A header the lane does not use is ignored when well-formed, refused when malformed: a
    // malformed spend header is a bug in the caller, and a silent pass would hide it until the
    // caller moves the same code to the lane that reads it.
    Optional<String> brand = header.apply(BRAND);
    if (brand.isPresent() && !LedgerId.isValid(brand.get())) {
      return Result.bad(
          BRAND, "x-spend-brand must be " + LedgerId.DESCRIPTION + unusedOn(lane.get(), BRAND));
    }
    String subject = null;
    if (lane.get().needsSubject()) {
      if (brand.isEmpty()) {
        return Result.bad(
            BRAND,
            "x-spend-brand is required on the "
                + lane.get().wireName()
                + " lane (the "
                + (lane.get() == Lane.APP ? "brand id" : "preview id")
                + ")");
      }
      subject = brand.get();
    }

    Cap monthly = cap(header, lane.get(), BRAND_MONTHLY);
    if (monthly.violation().isPresent()) {
      return new Result(Optional.empty(), monthly.violation());
    }
    Cap daily = cap(header, lane.get(), BRAND_DAILY);
    if (daily.violation().isPresent()) {
      return new Result(Optional.empty(), daily.violation());
    }
    return Result.ok(
        new SpendContext(
            lane.get(),
            subject,
            daily.micros(),
            monthly.micros(),
            requestId,
            conversation,
            priority,
            tag));
  }

  /** A cap header read: its micros (0 on a lane that does not use caps), or why it is refused. */
  private record Cap(long micros, Optional<HeaderViolation> violation) {}

  /**
   * Required on the app lane; elsewhere ignored when absent or well-formed. A present value must
   * pass {@link UsdAmount}, the ledger API's rule, on every lane.
   */
  private static Cap cap(Function<String, Optional<String>> header, Lane lane, String name) {
    Optional<String> value = header.apply(name);
    if (value.isEmpty()) {
      return lane == Lane.APP
          ? refusedCap(name, name + " is required on the app lane: " + UsdAmount.VALID)
          : new Cap(0, Optional.empty());
    }
    UsdAmount.Checked checked = UsdAmount.nonNegative(value.get());
    if (checked instanceof UsdAmount.Invalid invalid) {
      return refusedCap(
          name,
          name
              + " is malformed: it "
              + invalid.reason()
              + "; send "
              + UsdAmount.VALID
              + unusedOn(lane, name));
    }
    return new Cap(lane == Lane.APP ? ((UsdAmount.Valid) checked).micros() : 0, Optional.empty());
  }

  private static Cap refusedCap(String header, String message) {
    return new Cap(0, Optional.of(new HeaderViolation(header, message)));
  }

  /** For a header the lane does not read: tell the caller it may simply leave it out. */
  private static String unusedOn(Lane lane, String header) {
    boolean used = header.equals(BRAND) ? lane.needsSubject() : lane == Lane.APP;
    return used ? "" : " (or leave it out: the " + lane.wireName() + " lane does not use it)";
  }
}
