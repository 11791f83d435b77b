package dev.spendgateway.operator;

import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.audit.Progress;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.pekko.stream.javadsl.Sink;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code gateway-admin report}: spend per group for a period, read from the journal (see {@link
 * SpendReport}). Read-only, like {@code replay}: also on the journal of a running gateway.
 */
@Command(
    name = "report",
    mixinStandardHelpOptions = true,
    description = {
      "Spend per day, month, brand, lane, model, provider or tag for a period, from the journal.",
      "Per group: calls, settled_usd, voided, expired_usd, refused. settled_usd + expired_usd over"
          + " all groups equals the company-wide spend replay shows for the period.",
      "A reservation counts on the day it was reserved, in the zone the ledger counted that day"
          + " in, with its close."
    })
final class ReportVerb implements Callable<Integer> {
  /** The config key of the zone cap windows are counted in; UTC when unset. */
  static final String ZONE_KEY = "ledger.window-zone";

  @Mixin JournalOptions journal;

  @Option(
      names = "--from",
      paramLabel = "DATE",
      description = "First day (yyyy-MM-dd, in the window zone). Default: the 1st of this month.")
  LocalDate from;

  @Option(
      names = "--to",
      paramLabel = "DATE",
      description = "Last day, inclusive (yyyy-MM-dd). Default: the last day of --from's month.")
  LocalDate to;

  @Option(
      names = "--by",
      paramLabel = "KEYS",
      defaultValue = "day",
      description =
          "Comma-separated group keys: day, month, brand, lane, model, provider, tag (default day).")
  String by;

  @Option(
      names = "--format",
      paramLabel = "FORMAT",
      defaultValue = "table",
      description = "table (default), csv or json.")
  String format;

  @Option(
      names = "--zone",
      paramLabel = "ZONE",
      description =
          "Count every day in this one IANA zone. Default: each reservation on the day the ledger"
              + " counted it in (the journal's zone history; UTC before its first change), and"
              + " --from/--to in "
              + ZONE_KEY
              + " from the config, else UTC.")
  String zone;

  @Spec CommandLine.Model.CommandSpec spec;

  /** Today's date source; a test may fix it. */
  Clock clock = Clock.systemUTC();

  @Override
  public Integer call() throws Exception {
    List<SpendReport.Key> keys = keys();
    if (!List.of("table", "csv", "json").contains(format)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--format: table, csv or json, not '" + format + "'");
    }
    try (JournalSession session = new JournalSession(journal)) {
      ZoneId windowZone = zone(session);
      LocalDate first =
          from != null ? from : LocalDate.now(clock.withZone(windowZone)).withDayOfMonth(1);
      LocalDate last = to != null ? to : first.withDayOfMonth(first.lengthOfMonth());
      if (last.isBefore(first)) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--to " + last + " is before --from " + first);
      }
      // Without --zone each fact counts on the day the ledger booked it (the journal's own zone
      // history); --zone regroups every fact in that one zone.
      SpendReport report = new SpendReport(keys, windowZone, first, last, zone == null);
      Progress progress = new Progress(JournalVerbs.errStream(spec), "report");
      session.await(
          session
              .reader
              .current(1)
              .runWith(
                  Sink.foreach(
                      j -> {
                        for (var fact : GroupCommit.factsOf(j.event())) {
                          report.add(fact);
                        }
                        progress.tick();
                      }),
                  session.system));
      progress.finish();
      PrintWriter out = spec.commandLine().getOut();
      out.print(
          switch (format) {
            case "csv" -> report.csv();
            case "json" -> report.json() + "\n";
            default -> report.table();
          });
      out.flush();
      return 0;
    }
  }

  private List<SpendReport.Key> keys() {
    LinkedHashSet<SpendReport.Key> keys = new LinkedHashSet<>();
    try {
      for (String k : by.split(",")) {
        keys.add(SpendReport.Key.parse(k));
      }
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    return new ArrayList<>(keys);
  }

  private ZoneId zone(JournalSession session) {
    String name =
        zone != null
            ? zone
            : session.config.hasPath(ZONE_KEY) ? session.config.getString(ZONE_KEY) : "UTC";
    try {
      return ZoneId.of(name);
    } catch (DateTimeException e) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "zone '" + name + "' is not an IANA zone (e.g. Europe/Istanbul)");
    }
  }
}
