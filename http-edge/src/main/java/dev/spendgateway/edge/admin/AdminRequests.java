package dev.spendgateway.edge.admin;

import static dev.spendgateway.edge.json.JsonFields.id;
import static dev.spendgateway.edge.json.JsonFields.lane;
import static dev.spendgateway.edge.json.JsonFields.signedUsd;
import static dev.spendgateway.edge.json.JsonFields.text;
import static dev.spendgateway.edge.json.JsonFields.usd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.json.JsonFields;
import dev.spendgateway.edge.json.JsonFields.BadRequest;
import dev.spendgateway.ledger.AdjustmentScope;
import dev.spendgateway.ledger.AdjustmentWindow;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.policy.access.Lane;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Parses and validates the admin API's bodies; every problem is a {@link BadRequest} naming the
 * field. Every write needs an {@code operator} and a {@code reason}: they are journaled with it.
 * Credit and adjust take an optional {@code adjustmentId} chosen by the client, which makes a retry
 * safe (the ledger applies an id once), and a required {@code window} and {@code scope} (see {@link
 * Target}).
 *
 * <p>Operator and reason are plain printable text of at most {@link #MAX_TEXT} characters: no
 * control, format or line-separator characters. They are shown wherever the journal is read
 * (exports, tails, terminals), where a newline or an escape sequence in them could forge a line or
 * rewrite the screen.
 */
final class AdminRequests {
  static final int MAX_TEXT = 200;

  /** Client-chosen adjustment ids: like reservation ids, but at most 64 characters. */
  private static final Pattern ADJUSTMENT_ID =
      Pattern.compile("[A-Za-z0-9._:\\-]{1," + GlobalBudget.MAX_ADJUSTMENT_ID_LENGTH + "}");

  /** Who and why, required on every admin write. */
  record Who(String operator, String reason) {}

  /**
   * Which window an adjustment corrects and which caps it moves; both required, so no correction
   * lands in a window its author did not name.
   *
   * @param window the UTC day ({@code 2026-11-29}) or month ({@code 2026-11}) corrected
   * @param scope {@code grant}: the brand's own caps only; {@code refund}: the lane's and global
   *     too
   */
  record Target(String window, AdjustmentScope scope) {}

  /**
   * {@code credit}: a positive amount taken off a brand's settled spend.
   *
   * @param adjustmentId empty when the client left the choice to the server
   */
  record Credit(Optional<String> adjustmentId, long usdMicros, Who who, Target target) {}

  /**
   * {@code adjustments}: a signed amount on a lane's caps (positive = charge); id as in {@link
   * Credit}.
   */
  record Adjustment(
      Optional<String> adjustmentId,
      Lane lane,
      String subject,
      long deltaMicros,
      Who who,
      Target target) {}

  record Settle(long actualMicros, Who who) {}

  private final JsonFields fields;

  AdminRequests(ObjectMapper mapper) {
    this.fields = new JsonFields(mapper);
  }

  Credit credit(String body) {
    JsonNode json = fields.object(body);
    long usd = usd(json.get("usd"), "usd");
    if (usd == 0) {
      throw new BadRequest("usd", "usd must be positive");
    }
    return new Credit(adjustmentId(json), usd, who(json), target(json));
  }

  Adjustment adjustment(String body) {
    JsonNode json = fields.object(body);
    Lane lane = lane(json.get("lane"));
    String subject = lane.needsSubject() ? id(text(json.get("brand"), "brand"), "brand") : null;
    long delta = signedUsd(json.get("deltaUsd"), "deltaUsd");
    return new Adjustment(adjustmentId(json), lane, subject, delta, who(json), target(json));
  }

  Settle settle(String body) {
    JsonNode json = fields.object(body);
    return new Settle(usd(json.get("actualUsd"), "actualUsd"), who(json));
  }

  Who who(String body) {
    return who(fields.object(body));
  }

  /**
   * The optional {@code adjustmentId}: absent means the server chooses one. An explicit {@code
   * null} is refused rather than read as absent: a client that meant to send an id would lose its
   * safe retry.
   */
  private static Optional<String> adjustmentId(JsonNode json) {
    JsonNode node = json.get("adjustmentId");
    if (node == null) {
      return Optional.empty();
    }
    if (!node.isTextual() || !ADJUSTMENT_ID.matcher(node.textValue()).matches()) {
      throw new BadRequest(
          "adjustmentId",
          "adjustmentId must be 1-"
              + GlobalBudget.MAX_ADJUSTMENT_ID_LENGTH
              + " characters of [A-Za-z0-9._:-] (leave it out to let the gateway choose one)");
    }
    return Optional.of(node.textValue());
  }

  /**
   * The required {@code window} and {@code scope}. Checked for form only; whether the window has
   * begun, and whether a grant fits the lane, the ledger decides (400 naming the field either way).
   */
  private static Target target(JsonNode json) {
    String window = text(json.get("window"), "window");
    if (!AdjustmentWindow.isValid(window)) {
      throw new BadRequest(
          "window",
          "window must be the day (yyyy-MM-dd) or month (yyyy-MM) of ledger.window-zone the adjustment "
              + "corrects, e.g. \"2026-11-29\" for a refund of that day's calls");
    }
    String scope = text(json.get("scope"), "scope");
    return new Target(
        window,
        AdjustmentScope.fromWireName(scope)
            .orElseThrow(
                () ->
                    new BadRequest(
                        "scope",
                        "scope must be grant (only the brand's own caps) or refund (the provider gave money back: the lane's and "
                            + "the global caps too)")));
  }

  private static Who who(JsonNode json) {
    return new Who(
        limited(text(json.get("operator"), "operator"), "operator"),
        limited(text(json.get("reason"), "reason"), "reason"));
  }

  private static String limited(String value, String field) {
    if (value.isBlank()) {
      throw new BadRequest(field, field + " must not be blank");
    }
    if (value.codePointCount(0, value.length()) > MAX_TEXT) {
      throw new BadRequest(field, field + " must be at most " + MAX_TEXT + " characters");
    }
    if (!value.codePoints().allMatch(AdminRequests::isPlainPrintable)) {
      throw new BadRequest(
          field,
          field
              + " must be plain printable text: no line breaks, tabs or other "
              + "control or formatting characters");
    }
    return value;
  }

  /**
   * Letters, digits, punctuation, symbols and spaces; not control characters (CR, LF, ESC, NEL...),
   * format characters (bidi overrides), line or paragraph separators, lone surrogates or unassigned
   * code points.
   */
  static boolean isPlainPrintable(int codePoint) {
    return switch (Character.getType(codePoint)) {
      case Character.CONTROL,
          Character.FORMAT,
          Character.LINE_SEPARATOR,
          Character.PARAGRAPH_SEPARATOR,
          Character.SURROGATE,
          Character.UNASSIGNED,
          Character.PRIVATE_USE ->
          false;
      default -> true;
    };
  }
}
