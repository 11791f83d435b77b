package dev.spendgateway.policy.request;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the edge read from a multipart transcription upload: each part's name, whether it is a file,
 * its size, and the text of non-file parts. The file's bytes stay with the edge; policy only needs
 * their count.
 *
 * @param parts the parts in the order received
 */
public record TranscriptionForm(List<Part> parts) {

  public TranscriptionForm {
    parts = List.copyOf(parts);
  }

  /**
   * One multipart part.
   *
   * @param name the form field name
   * @param file whether the part carried a file (a filename in its Content-Disposition)
   * @param sizeBytes the part's size in bytes
   * @param value the text of a non-file part; null for files
   */
  public record Part(String name, boolean file, long sizeBytes, String value) {
    public Part {
      Objects.requireNonNull(name, "name");
      if (sizeBytes < 0) {
        throw new IllegalArgumentException("part size cannot be negative");
      }
    }

    public static Part text(String name, String value) {
      return new Part(name, false, value.getBytes(StandardCharsets.UTF_8).length, value);
    }

    public static Part file(String name, long sizeBytes) {
      return new Part(name, true, sizeBytes, null);
    }
  }

  public static TranscriptionForm of(Part... parts) {
    return new TranscriptionForm(List.of(parts));
  }

  public Optional<Part> part(String name) {
    return parts.stream().filter(p -> p.name().equals(name)).findFirst();
  }
}
