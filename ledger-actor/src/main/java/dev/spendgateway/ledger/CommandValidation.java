package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerProtocol.Adjust;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.access.SpendModel;
import dev.spendgateway.policy.access.SpendTag;
import java.time.Instant;
import java.util.Optional;

/**
 * Pure checks of one command's own fields, before any state is looked at. The edge validates first;
 * these are the ledger's backstop, so a malformed command never reaches the books. Each answers the
 * first malformed field (the name the HTTP APIs use), or empty.
 */
public final class CommandValidation {
  /** Longest id the ledger accepts (the edge answers 400 above it). */
  public static final int MAX_ID_LENGTH = 128;

  /** Longest operator adjustment id the ledger accepts (the admin API answers 400 above it). */
  public static final int MAX_ADJUSTMENT_ID_LENGTH = 64;

  private CommandValidation() {}

  /** The first malformed field of a reserve, if any. */
  public static Optional<String> invalidReserve(Reserve cmd) {
    if (cmd.id() == null
        || cmd.id().isBlank()
        || cmd.id().length() > MAX_ID_LENGTH
        || cmd.owner() == null
        || Owner.impliedBy(cmd.id()) == Owner.GATEWAY && cmd.owner() != Owner.GATEWAY) {
      return Optional.of("id");
    }
    if (cmd.lane() == null) {
      return Optional.of("lane");
    }
    if (cmd.lane().needsSubject() && !validSubject(cmd.subject())) {
      return Optional.of("brand");
    }
    if (cmd.amountMicros() < cmd.owner().minimumAmountMicros()) {
      return Optional.of("amountUsd");
    }
    if (cmd.lane() == Lane.APP && cmd.brandDailyMicros() < 0) {
      return Optional.of("brandDailyUsd");
    }
    if (cmd.lane() == Lane.APP && cmd.brandMonthlyMicros() < 0) {
      return Optional.of("brandMonthlyUsd");
    }
    if (cmd.tag() != null && !SpendTag.isValid(cmd.tag())) {
      return Optional.of("tag");
    }
    if (cmd.model() != null && !SpendModel.isValid(cmd.model())) {
      return Optional.of("model");
    }
    if (cmd.provider() != null && !SpendModel.isValid(cmd.provider())) {
      return Optional.of("provider");
    }
    return Optional.empty();
  }

  /** What to tell the caller about {@code field} of a malformed reserve. */
  public static String invalidReserveMessage(Reserve cmd, String field) {
    if (field.equals("id")
        && cmd.owner() != null
        && cmd.id() != null
        && cmd.id().length() <= MAX_ID_LENGTH
        && Owner.impliedBy(cmd.id()) == Owner.GATEWAY) {
      return "ids starting with "
          + Owner.GATEWAY_ID_PREFIX
          + " are the gateway's own; choose another id";
    }
    if (field.equals("amountUsd") && cmd.amountMicros() >= 0) {
      return "amountUsd must be greater than 0";
    }
    if (field.equals("tag")) {
      return "tag must be " + SpendTag.DESCRIPTION;
    }
    if (field.equals("model") || field.equals("provider")) {
      return field + " must be " + SpendModel.DESCRIPTION;
    }
    return field + " is missing or out of range";
  }

  /**
   * The first malformed field of an operator adjustment at {@code now}, if any. Its window must be
   * a day or month that has begun (nothing was spent in a later one), and a grant needs a subject
   * whose caps it moves (the free lane has none).
   */
  public static Optional<String> invalidAdjust(Adjust cmd, Instant now) {
    return invalidAdjust(cmd, now, dev.spendgateway.policy.caps.WindowCalendar.UTC);
  }

  /** As above, with the window's future judged in the ledger's {@code calendar}. */
  public static Optional<String> invalidAdjust(
      Adjust cmd, Instant now, dev.spendgateway.policy.caps.WindowCalendar calendar) {
    if (cmd.adjustmentId() == null
        || cmd.adjustmentId().isBlank()
        || cmd.adjustmentId().length() > MAX_ADJUSTMENT_ID_LENGTH) {
      return Optional.of("adjustmentId");
    }
    if (cmd.lane() == null) {
      return Optional.of("lane");
    }
    if (cmd.lane().needsSubject() && !validSubject(cmd.subject())) {
      return Optional.of("brand");
    }
    if (cmd.operator() == null || cmd.operator().isBlank()) {
      return Optional.of("operator");
    }
    if (!AdjustmentWindow.isValid(cmd.window())
        || AdjustmentWindow.isInTheFuture(cmd.window(), now, calendar)) {
      return Optional.of("window");
    }
    if (cmd.scope() == null || cmd.scope() == AdjustmentScope.GRANT && !cmd.lane().needsSubject()) {
      return Optional.of("scope");
    }
    return Optional.empty();
  }

  /** What to tell the operator about {@code field} of a malformed adjustment. */
  public static String invalidAdjustMessage(Adjust cmd, String field) {
    return switch (field) {
      case "window" ->
          "window must be the day (yyyy-MM-dd) or month (yyyy-MM) of ledger.window-zone the adjustment corrects, "
              + "not later than the current one";
      case "scope" ->
          cmd.scope() == null
              ? "scope must be grant (only the brand's own caps) or refund (the lane's and the global caps too)"
              : "scope grant moves a brand's or preview's own caps; the free lane has none, so use refund";
      default -> field + " is missing or out of range";
    };
  }

  private static boolean validSubject(String subject) {
    return subject != null && !subject.isBlank() && subject.length() <= MAX_ID_LENGTH;
  }
}
