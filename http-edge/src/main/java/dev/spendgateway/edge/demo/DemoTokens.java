package dev.spendgateway.edge.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Properties;

/**
 * The pair {@code --demo} uses: a caller token and, different, an operator (admin) token. Kept in
 * the demo's data dir ({@code demo-tokens.properties}, readable by its owner only) and reused on
 * every demo start, so a token exported from the banner — and the README's examples using it — keep
 * working after a restart. A {@code GATEWAY_TOKEN} / {@code GATEWAY_ADMIN_TOKEN} set in the
 * environment wins over the kept one, and is kept in its place: the file always holds the tokens
 * the running demo accepts.
 *
 * @param caller the callers' token
 * @param admin the operator's token
 */
public record DemoTokens(String caller, String admin) {
  static final String FILE = "demo-tokens.properties";

  /** A fresh pair (not kept anywhere). */
  public static DemoTokens generate() {
    return new DemoTokens("demo-" + randomToken(), "demo-admin-" + randomToken());
  }

  /**
   * The pair kept in {@code demoDir}, made and kept on first use; a non-blank {@code
   * callerOverride} or {@code adminOverride} (the environment's) replaces its half.
   */
  public static DemoTokens keptIn(Path demoDir, String callerOverride, String adminOverride)
      throws IOException {
    Path file = demoDir.resolve(FILE);
    DemoTokens kept;
    if (Files.exists(file)) {
      Properties p = new Properties();
      try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
        p.load(in);
      }
      String caller = p.getProperty("caller", "");
      String admin = p.getProperty("admin", "");
      kept =
          caller.isBlank() || admin.isBlank() || caller.equals(admin)
              ? write(file)
              : new DemoTokens(caller, admin);
    } else {
      Files.createDirectories(demoDir);
      kept = write(file);
    }
    DemoTokens used =
        new DemoTokens(
            callerOverride == null || callerOverride.isBlank() ? kept.caller() : callerOverride,
            adminOverride == null || adminOverride.isBlank() ? kept.admin() : adminOverride);
    // The file says what this demo accepts: the README reads the tokens from it, and with an
    // environment token it kept the old one, which then got 401.
    return used.equals(kept) ? kept : write(file, used);
  }

  private static DemoTokens write(Path file) throws IOException {
    return write(file, generate());
  }

  private static DemoTokens write(Path file, DemoTokens fresh) throws IOException {
    String text =
        "# bin/gateway --demo's tokens, reused on every demo start. Delete this file for new ones.\n"
            + "caller="
            + fresh.caller()
            + "\nadmin="
            + fresh.admin()
            + "\n";
    Files.writeString(file, text, StandardCharsets.UTF_8);
    try {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    } catch (UnsupportedOperationException notPosix) {
      // another file system: the data dir's own permissions protect it
    }
    return fresh;
  }

  private static String randomToken() {
    byte[] bytes = new byte[18];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /** Never print a token by accident: the banner prints them on purpose. */
  @Override
  public String toString() {
    return "DemoTokens[<redacted>]";
  }
}
