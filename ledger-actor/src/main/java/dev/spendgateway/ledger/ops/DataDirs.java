package dev.spendgateway.ledger.ops;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * {@code gateway.data-dir} ({@code GATEWAY_DATA_DIR}) as every process reads it: absolute, and
 * checked before anything opens the journal in it.
 */
public final class DataDirs {
  public static final String KEY = "gateway.data-dir";

  private DataDirs() {}

  /**
   * Resolves {@code unresolved} with {@code gateway.data-dir} made absolute against the working
   * directory. H2 refuses an implicitly relative file path ({@code mydata/ledger}), and the journal
   * URL is built from this key, so a relative value would leave the ledger unable to open its
   * journal; the gateway, the CLI and the launcher must also agree on one directory.
   */
  public static Config resolveAbsolute(Config unresolved) {
    Config resolved = unresolved.resolve();
    if (!resolved.hasPath(KEY)) {
      return resolved;
    }
    String dir = resolved.getString(KEY);
    Path absolute = absolute(dir);
    if (absolute.toString().equals(dir)) {
      return resolved;
    }
    return ConfigFactory.parseMap(Map.of(KEY, absolute.toString()))
        .withFallback(unresolved)
        .resolve();
  }

  /** {@code dir} as an absolute, normalized path ({@code ~/} expanded, as a shell would). */
  public static Path absolute(String dir) {
    String expanded =
        dir.startsWith("~/") ? System.getProperty("user.home") + dir.substring(1) : dir;
    return Path.of(expanded).toAbsolutePath().normalize();
  }

  /**
   * Why the gateway cannot keep its journal in {@code dir} (one line naming the directory and the
   * fix); empty when it can. Creates the directory when it is missing, as the gateway would.
   */
  public static Optional<String> unwritable(Path dir) {
    if (Files.exists(dir) && !Files.isDirectory(dir)) {
      return Optional.of(
          "data dir " + dir + " is not a directory; set GATEWAY_DATA_DIR to a directory");
    }
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      return Optional.of(
          "data dir "
              + dir
              + " cannot be created ("
              + e.getClass().getSimpleName()
              + ": "
              + e.getMessage()
              + "); set GATEWAY_DATA_DIR to a directory this user may write");
    }
    if (!Files.isDirectory(dir)) {
      return Optional.of(
          "data dir " + dir + " is not a directory; set GATEWAY_DATA_DIR to a directory");
    }
    Path probe = dir.resolve(".write-check-" + ProcessHandle.current().pid());
    try {
      Files.writeString(probe, "ok");
      Files.delete(probe);
    } catch (IOException e) {
      return Optional.of(
          "data dir "
              + dir
              + " is not writable by this user ("
              + e.getClass().getSimpleName()
              + "); fix its permissions or set GATEWAY_DATA_DIR to a writable directory");
    }
    Path journal = dir.resolve("ledger.mv.db");
    if (Files.exists(journal) && !Files.isWritable(journal)) {
      return Optional.of(
          "journal " + journal + " is not writable by this user; fix its permissions");
    }
    return Optional.empty();
  }
}
