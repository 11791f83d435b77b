package dev.spendgateway.operator;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs {@code gateway-admin} in process, capturing what it prints. */
final class Cli {
  private Cli() {}

  /** One run: the exit code, stdout, stderr. */
  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    var cli = GatewayAdmin.commandLine();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int exit = cli.execute(args);
    return new Run(exit, out.toString(), err.toString());
  }

  /** {@code verb} on the H2 journal in {@code dataDir} (the tests' config), then {@code more}. */
  static Run onJournal(Path dataDir, String verb, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                verb, "--config", TestLedger.CONFIG.toString(), "--data-dir", dataDir.toString()));
    args.addAll(List.of(more));
    return run(args.toArray(String[]::new));
  }
}
