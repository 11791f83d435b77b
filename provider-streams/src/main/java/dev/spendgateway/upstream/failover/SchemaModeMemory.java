package dev.spendgateway.upstream.failover;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * JSON schemas OpenAI strict mode rejected, by SHA-256 of the canonical schema (object keys sorted
 * at every level, compact), so the next request with that schema goes straight to {@code
 * json_object} mode instead of paying for a 400 first. Bounded: the least recently seen hash is
 * forgotten first. Holds hashes only, never a schema. Thread-safe.
 */
public final class SchemaModeMemory {
  private final LinkedHashMap<String, Boolean> hashes;

  public SchemaModeMemory(int maxEntries) {
    if (maxEntries < 1) {
      throw new IllegalArgumentException("max-entries must be >= 1");
    }
    this.hashes =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > maxEntries;
          }
        };
  }

  /** Remembers that strict mode rejected this schema. */
  public synchronized void rememberRejected(JsonNode schema) {
    hashes.put(hash(schema), Boolean.TRUE);
  }

  /** True when strict mode rejected this schema (or one equal to it up to key order) before. */
  public synchronized boolean wasRejected(JsonNode schema) {
    return hashes.get(hash(schema)) != null;
  }

  public synchronized int size() {
    return hashes.size();
  }

  /**
   * Lower-case hex SHA-256 of the canonical form: equal schemas hash equal whatever their key
   * order.
   */
  public static String hash(JsonNode schema) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      byte[] digest = sha.digest(canonical(schema).toString().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is always available", e);
    }
  }

  /** A copy with object keys sorted at every level; arrays keep their order (it is meaningful). */
  static JsonNode canonical(JsonNode node) {
    if (node.isObject()) {
      TreeMap<String, JsonNode> sorted = new TreeMap<>();
      node.fields().forEachRemaining(e -> sorted.put(e.getKey(), canonical(e.getValue())));
      ObjectNode out = JsonNodeFactory.instance.objectNode();
      sorted.forEach(out::set);
      return out;
    }
    if (node.isArray()) {
      ArrayNode out = JsonNodeFactory.instance.arrayNode();
      node.forEach(item -> out.add(canonical(item)));
      return out;
    }
    return node;
  }
}
