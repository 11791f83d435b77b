package dev.spendgateway.edge.call;

import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.dataclass.DataClasses;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * Reads {@code x-data-class} from a request: the class it names, the default when it names none, or
 * why the header is refused (400 naming it). Sent twice, it is refused like a spend header: two
 * readers could pick different values, and the check must be made on the value that is obeyed.
 */
public final class DataClassHeader {
  private DataClassHeader() {}

  /** Either the class or the refusal message; exactly one is present. */
  public record Read(Optional<DataClass> dataClass, Optional<String> refusal) {}

  public static Read read(HttpRequest request, DataClasses classes) {
    List<String> values = SpendHeaders.valuesOf(request.getHeaders(), DataClasses.HEADER);
    if (values.size() > 1) {
      return new Read(
          Optional.empty(),
          Optional.of(DataClasses.HEADER + " was sent " + values.size() + " times; send it once"));
    }
    DataClasses.Resolution r = classes.resolve(values.stream().findFirst());
    if (r instanceof DataClasses.Unknown unknown) {
      return new Read(Optional.empty(), Optional.of(unknown.message()));
    }
    return new Read(Optional.of(((DataClasses.Known) r).dataClass()), Optional.empty());
  }
}
