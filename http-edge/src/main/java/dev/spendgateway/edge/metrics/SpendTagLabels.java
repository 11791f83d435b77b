package dev.spendgateway.edge.metrics;

import dev.spendgateway.policy.access.SpendTag;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code tag} label a spend metric carries for a call's workflow tag: the tag itself when the
 * operator listed it ({@code gateway.spend-tags.metric-tags}), {@code other} for any other tag,
 * {@code none} for a call without one. Tags are the callers' free choice and every label value is a
 * series a monitoring system keeps for good, so only listed tags become values: the label has at
 * most {@code listed + 2} of them whatever the callers send. Pure.
 */
public record SpendTagLabels(Set<String> listed) {
  public static final String OTHER = "other";
  public static final String NONE = "none";

  /** No tag listed: every tagged call is {@code other}. */
  public static final SpendTagLabels NONE_LISTED = new SpendTagLabels(Set.of());

  public SpendTagLabels {
    listed = Set.copyOf(listed);
  }

  /**
   * The labels for {@code tags} from the config; refuses a malformed tag, or one of the two
   * reserved values, which would merge a workflow with the unlisted or untagged calls.
   */
  public static SpendTagLabels of(List<String> tags) {
    for (String t : tags) {
      if (!SpendTag.isValid(t)) {
        throw new IllegalArgumentException(
            "'" + t + "' is not a spend tag (" + SpendTag.DESCRIPTION + ")");
      }
      if (t.equals(OTHER) || t.equals(NONE)) {
        throw new IllegalArgumentException(
            "'" + t + "' is the label of unlisted or untagged calls; it cannot be listed");
      }
    }
    return new SpendTagLabels(Set.copyOf(tags));
  }

  /** The label value for a call's tag. */
  public String labelOf(Optional<String> tag) {
    if (tag.isEmpty()) {
      return NONE;
    }
    return listed.contains(tag.get()) ? tag.get() : OTHER;
  }
}
