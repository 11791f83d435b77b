package dev.spendgateway.operator;

import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bin/gateway-admin}: the operator's CLI. Read verbs ({@link JournalVerbs}: replay, verify,
 * export, tail; {@link BackupVerbs}; {@link ImportVerb}) read or write the journal in the data
 * directory (reading also while the gateway runs); write verbs ({@link AdminHttpVerbs}: credit,
 * adjust, settle, void, status, reset-circuit) go through the running gateway's {@code /admin} API,
 * never to the journal directly, with the operator's admin token ({@code GATEWAY_ADMIN_TOKEN} or
 * {@code --admin-token}).
 *
 * <p>Exit codes: 0 done; 1 verify found a violation, or the gateway refused a write; 2 bad usage or
 * the journal/gateway could not be reached.
 */
@Command(
    name = "gateway-admin",
    mixinStandardHelpOptions = true,
    versionProvider = GatewayAdmin.Version.class,
    description =
        "Operate the spend gateway: replay, verify, export and tail the ledger journal; "
            + "credit, adjust, settle and void through the running gateway.",
    subcommands = {
      JournalVerbs.Replay.class,
      JournalVerbs.Verify.class,
      JournalVerbs.Export.class,
      JournalVerbs.Tail.class,
      ReportVerb.class,
      BackupVerbs.Backup.class,
      BackupVerbs.Restore.class,
      ImportVerb.class,
      AdminHttpVerbs.Credit.class,
      AdminHttpVerbs.Adjust.class,
      AdminHttpVerbs.Settle.class,
      AdminHttpVerbs.VoidReservation.class,
      AdminHttpVerbs.Status.class,
      AdminHttpVerbs.ResetCircuit.class,
      CommandLine.HelpCommand.class
    })
public final class GatewayAdmin implements Callable<Integer> {
  /** Exit code: verify found a violation, the gateway refused a write, or it is not ready. */
  static final int VIOLATION = 1;

  /** Exit code: bad usage, or the journal or the gateway could not be reached. */
  static final int FAILED = 2;

  private static final String LOGBACK = "dev/spendgateway/operator/gateway-admin-logback.xml";

  @Spec CommandLine.Model.CommandSpec spec;

  /** The process environment ({@code GATEWAY_*}, {@code USER}); a map in tests. */
  final Function<String, String> env;

  @Option(
      names = "--verbose",
      scope = CommandLine.ScopeType.INHERIT,
      description = "On an error, print the stack trace too.")
  boolean verbose;

  private GatewayAdmin(Function<String, String> env) {
    this.env = env;
  }

  public static void main(String[] args) {
    // An import into an H2 data dir serves the file while it writes (AUTO_SERVER): this host only.
    if (System.getProperty("h2.bindAddress") == null) {
      System.setProperty("h2.bindAddress", "127.0.0.1");
    }
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", LOGBACK);
    }
    // Initialize logging before the actor system's threads log: nothing is buffered and replayed.
    org.slf4j.LoggerFactory.getILoggerFactory();
    System.exit(commandLine().execute(args));
  }

  /** The configured command line, reading the process environment. */
  public static CommandLine commandLine() {
    return commandLine(System::getenv);
  }

  /**
   * The configured command line reading {@code env} instead of the process environment (tests).
   * Every error is one line on stderr (the stack trace only with {@code --verbose}); a wrong option
   * or argument is one line naming it and where the help is, exit 2.
   */
  public static CommandLine commandLine(Function<String, String> env) {
    GatewayAdmin root = new GatewayAdmin(env);
    return new CommandLine(root)
        .setExecutionExceptionHandler(
            (e, cmd, parsed) -> {
              cmd.getErr().println("gateway-admin: " + oneLine(e));
              if (root.verbose) {
                e.printStackTrace(cmd.getErr());
              }
              cmd.getErr().flush();
              return FAILED;
            })
        .setParameterExceptionHandler(
            (e, args) -> {
              CommandLine cmd = e.getCommandLine();
              cmd.getErr()
                  .println(
                      "gateway-admin: "
                          + oneLine(e)
                          + " ("
                          + cmd.getCommandSpec().qualifiedName()
                          + " --help lists the options)");
              cmd.getErr().flush();
              return FAILED;
            });
  }

  /** The innermost cause's message, first line only (an exception's message may span lines). */
  static String oneLine(Throwable e) {
    Throwable t = e;
    while ((t instanceof ExecutionException
            || t instanceof CompletionException
            || t.getMessage() == null)
        && t.getCause() != null
        && t.getCause() != t) {
      t = t.getCause();
    }
    String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    return message.lines().findFirst().orElse(message).strip();
  }

  /** {@code --version}: the jar's version (its manifest). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {
        "gateway-admin "
            + Optional.ofNullable(GatewayAdmin.class.getPackage().getImplementationVersion())
                .orElse("dev")
      };
    }
  }

  /** No verb: the usage, exit 2. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getOut());
    return FAILED;
  }
}
