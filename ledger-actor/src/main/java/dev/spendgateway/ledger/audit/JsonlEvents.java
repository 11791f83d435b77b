package dev.spendgateway.ledger.audit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.spendgateway.ledger.LedgerEvents.Event;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The export format: one JSON object per line, {@code
 * {"seq":12,"type":"ReservationSettled","event":{…,"v":1}}}. The {@code event} object has the same
 * fields as the journaled event (Jackson, as in the journal's CBOR); money in integer
 * micro-dollars, instants in ISO-8601 UTC. Lines read back with {@link #parse} (for {@code verify
 * --input}).
 */
public final class JsonlEvents {
  private static final Map<String, Class<? extends Event>> TYPES = eventTypes();

  private final ObjectMapper mapper =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .addModule(new Jdk8Module())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .build();

  public String line(Journaled j) {
    ObjectNode node = mapper.createObjectNode();
    node.put("seq", j.sequenceNr());
    node.put("type", j.type());
    node.set("event", mapper.valueToTree(j.event()));
    try {
      return mapper.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write event " + j.sequenceNr(), e);
    }
  }

  /**
   * One line back to an event; {@link IllegalArgumentException} naming the problem when it is not
   * one.
   */
  public Journaled parse(String line) {
    try {
      JsonNode node = mapper.readTree(line);
      String type = node.path("type").asText();
      Class<? extends Event> cls = TYPES.get(type);
      if (cls == null) {
        throw new IllegalArgumentException("unknown event type '" + type + "'");
      }
      if (!node.path("event").isObject()) {
        throw new IllegalArgumentException("no \"event\" object");
      }
      return new Journaled(node.path("seq").asLong(), mapper.treeToValue(node.get("event"), cls));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "not an exported event: "
              + e.getOriginalMessage().lines().findFirst().orElse("malformed JSON"),
          e);
    }
  }

  /**
   * The non-blank lines of an export file as events (lazily; close the stream). A line that is not
   * an event fails with its file and line number, so a hand-edited file can be fixed.
   */
  public Stream<Journaled> read(Path file) {
    try {
      BufferedReader reader = Files.newBufferedReader(file);
      long[] lineNumber = {0};
      return reader
          .lines()
          .peek(l -> lineNumber[0]++)
          .filter(l -> !l.isBlank())
          .map(
              l -> {
                try {
                  return parse(l);
                } catch (IllegalArgumentException e) {
                  throw new IllegalArgumentException(
                      file + " line " + lineNumber[0] + ": " + e.getMessage(), e);
                }
              })
          .onClose(
              () -> {
                try {
                  reader.close();
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Class<? extends Event>> eventTypes() {
    Map<String, Class<? extends Event>> types = new HashMap<>();
    for (Class<?> c : Event.class.getPermittedSubclasses()) {
      types.put(c.getSimpleName(), (Class<? extends Event>) c);
    }
    return Map.copyOf(types);
  }
}
