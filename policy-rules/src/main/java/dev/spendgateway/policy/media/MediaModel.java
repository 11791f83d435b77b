package dev.spendgateway.policy.media;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A video model: priced per second of output, the price depending on the frame size.
 *
 * @param name the model id exactly as the media provider spells it
 * @param microsPerSecondBySize micro-dollars per second of video, per size ({@code 720x1280})
 * @param allowedSeconds the clip lengths the provider accepts
 */
public record MediaModel(
    String name, Map<String, Long> microsPerSecondBySize, List<Integer> allowedSeconds) {

  public MediaModel {
    Objects.requireNonNull(name, "name");
    if (microsPerSecondBySize.isEmpty()) {
      throw new IllegalArgumentException("media model " + name + " has no size prices");
    }
    if (allowedSeconds.isEmpty()) {
      throw new IllegalArgumentException("media model " + name + " allows no seconds");
    }
    microsPerSecondBySize = Map.copyOf(new TreeMap<>(microsPerSecondBySize));
    allowedSeconds = List.copyOf(allowedSeconds.stream().sorted().toList());
  }

  public Optional<Long> microsPerSecond(String size) {
    return Optional.ofNullable(microsPerSecondBySize.get(size));
  }

  public boolean allows(int seconds) {
    return allowedSeconds.contains(seconds);
  }

  /** The dearest size tier: what a request that names no size is reserved at. */
  public long dearestMicrosPerSecond() {
    return microsPerSecondBySize.values().stream().mapToLong(Long::longValue).max().orElseThrow();
  }

  public int longestSeconds() {
    return allowedSeconds.get(allowedSeconds.size() - 1);
  }

  /** Sizes in a stable order, for refusal messages. */
  public List<String> sizes() {
    return List.copyOf(new TreeMap<>(microsPerSecondBySize).keySet());
  }
}
