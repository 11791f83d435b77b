package dev.spendgateway.edge;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.journal.JournalDurability;
import dev.spendgateway.ledger.ops.DataDirs;
import dev.spendgateway.ledger.ops.JournalDatabase;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.request.PolicyLimits;
import dev.spendgateway.upstream.client.UpstreamSettings;
import dev.spendgateway.upstream.failover.FailoverSettings;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import dev.spendgateway.upstream.failover.RoutingProfiles;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.settings.ServerSettings;

/**
 * Everything the gateway reads from its configuration, read once before anything starts or binds:
 * every setting object is built the way the gateway builds it (types, ranges, the timers on a
 * call's path, the model catalog, every routing profile's models in it, the journal's durability
 * wiring), then the data dir must be writable and the port free. The first problem comes back as
 * one line naming the key, its value and the fix, so a bad configuration stops the gateway before
 * it listens — never a JVM that runs on, half started, answering 503.
 */
public final class StartupCheck {
  /** What {@code bin/gateway --check} and the start itself validate. */
  public enum Scope {
    /** Configuration, data dir and port. */
    ALL,
    /** Configuration and data dir: the port is the running gateway's (checked while it runs). */
    WITHOUT_PORT
  }

  private StartupCheck() {}

  /**
   * The first reason the gateway must not start with {@code config}, as one line; empty when it
   * may.
   *
   * @param tokenOptional {@code --demo} (it makes its own tokens) or {@code --check} (it checks the
   *     configuration, and says apart that the start needs the token)
   */
  public static Optional<String> firstProblem(Config config, boolean tokenOptional, Scope scope) {
    List<Supplier<Optional<String>>> checks =
        List.of(
            () -> GatewaySettings.fromConfig(config).startupProblem(tokenOptional),
            () -> none(() -> LedgerSettings.fromConfig(config)),
            () -> none(() -> JournalDurability.requireConsistent(config)),
            () -> none(() -> PolicyLimits.fromMap(config.getConfig("policy").root().unwrapped())),
            () ->
                none(
                    () ->
                        RoutingProfiles.fromConfig(
                            config,
                            ModelCatalog.fromMap(config.getConfig("models").root().unwrapped()))),
            () -> none(() -> FailoverSettings.fromConfig(config)),
            () -> none(() -> ProviderRateLimits.fromConfig(config, System::nanoTime)),
            () -> none(() -> UpstreamSettings.fromConfig(config)),
            () -> none(() -> ServerSettings.create(config)),
            () -> none(() -> GatewayKeys.checkAll(config)),
            () -> dataDirProblem(config),
            () ->
                scope == Scope.ALL
                    ? portProblem(GatewaySettings.fromConfig(config))
                    : hostProblem(GatewaySettings.fromConfig(config)));
    for (Supplier<Optional<String>> check : checks) {
      Optional<String> problem;
      try {
        problem = check.get();
      } catch (ConfigException e) {
        problem = Optional.of(describe(e, config));
      } catch (RuntimeException e) {
        problem = Optional.of(describe(e, config));
      }
      if (problem.isPresent()) {
        return problem.map(StartupCheck::oneLine);
      }
    }
    return Optional.empty();
  }

  /**
   * What does not stop a start but leaves a profile without its promise, one line each: a profile's
   * primary or fallback model that is retired (by lifecycle or past its end of support) — the
   * router routes around it, so that profile has no working failover (or no primary). Assumes
   * {@link #firstProblem} found nothing.
   */
  public static java.util.List<String> warnings(Config config, java.time.LocalDate today) {
    RoutingProfiles profiles =
        RoutingProfiles.fromConfig(
            config, ModelCatalog.fromMap(config.getConfig("models").root().unwrapped()));
    java.util.List<String> out = new java.util.ArrayList<>();
    for (String name : profiles.names()) {
      profiles
          .find(name)
          .ifPresent(
              p -> {
                if (p.primary().isRetiredOn(today)) {
                  out.add(
                      "profile '"
                          + name
                          + "' primary model '"
                          + p.primary().name()
                          + "' is retired: every call on it goes "
                          + "to its fallback; replace it in conf/profiles.conf");
                }
                p.fallback()
                    .filter(f -> f.isRetiredOn(today))
                    .ifPresent(
                        f ->
                            out.add(
                                "profile '"
                                    + name
                                    + "' fallback model '"
                                    + f.name()
                                    + "' is retired: the profile has no failover; replace it in conf/profiles.conf"));
              });
    }
    return out;
  }

  private static Optional<String> none(Runnable check) {
    check.run();
    return Optional.empty();
  }

  /** The H2 file journal's directory must exist (or be creatable) and be writable. */
  private static Optional<String> dataDirProblem(Config config) {
    return JournalDatabase.of(config).flatMap(db -> DataDirs.unwritable(db.dataDir()));
  }

  /** The bind address must name this machine (resolved the way the bind will). */
  static Optional<String> hostProblem(GatewaySettings settings) {
    try {
      InetAddress.getByName(settings.host());
      return Optional.empty();
    } catch (UnknownHostException e) {
      return Optional.of(unknownHost(settings));
    }
  }

  private static String unknownHost(GatewaySettings settings) {
    return "gateway.host (GATEWAY_HOST) = '"
        + settings.host()
        + "' is not an address or a known host "
        + "name; set GATEWAY_HOST to an interface of this machine, e.g. 127.0.0.1";
  }

  /**
   * Another process on a port would make the bind fail only after the ledger started: both
   * listeners (the HTTP/1.1 port and, when on, the HTTP/2 cleartext port) are tried first.
   */
  static Optional<String> portProblem(GatewaySettings settings) {
    InetAddress address;
    try {
      address = InetAddress.getByName(settings.host());
    } catch (UnknownHostException e) {
      return Optional.of(unknownHost(settings));
    }
    return busy(address, settings.host(), settings.port(), "GATEWAY_PORT (gateway.port)")
        .or(
            () ->
                busy(
                    address,
                    settings.host(),
                    settings.http2Port(),
                    "gateway.http2-port (JAVA_OPTS=-Dgateway.http2-port=N, 0 = off)"));
  }

  /** Why nothing can listen on {@code port}, if so; port 0 is any free port (tests) or off. */
  private static Optional<String> busy(InetAddress address, String host, int port, String key) {
    if (port == 0) {
      return Optional.empty();
    }
    try (ServerSocket probe = new ServerSocket()) {
      probe.setReuseAddress(true);
      probe.bind(new InetSocketAddress(address, port));
      return Optional.empty();
    } catch (IOException e) {
      return Optional.of(
          "cannot listen on "
              + host
              + ":"
              + port
              + " ("
              + e.getMessage()
              + "): another process uses the port, or the address is not on this machine; stop it"
              + " or set "
              + key
              + " / GATEWAY_HOST");
    }
  }

  /** The keys the environment sets (conf/*.conf's ${?VAR} lines), to name the variable to fix. */
  private static final java.util.Map<String, String> ENV =
      java.util.Map.of(
          "gateway.host", "GATEWAY_HOST",
          "gateway.port", "GATEWAY_PORT",
          "gateway.data-dir", "GATEWAY_DATA_DIR",
          "providers.openai.base-url", "OPENAI_BASE_URL",
          "providers.anthropic.base-url", "ANTHROPIC_BASE_URL");

  /** Keys whose values are secrets: named in a message, never shown. */
  private static final Pattern SECRET = Pattern.compile("(?i)token|api-key|password|secret");

  /** A config key inside a message (e.g. {@code ledger.caps.global-daily-usd}). */
  private static final Pattern KEY = Pattern.compile("[a-z][a-z0-9-]*(?:\\.[A-Za-z0-9_\"-]+)+");

  /**
   * {@code e}'s message, plus the value the first key it names has and where that value came from,
   * and the fix: edit that key, or pass it as {@code -Dkey=value} in JAVA_OPTS.
   */
  static String describe(RuntimeException e, Config config) {
    // A ConfigException's message starts with where the value came from (file and line, or
    // "system properties"), which is what an operator needs to find it.
    String message = String.valueOf(e.getMessage());
    Matcher m = KEY.matcher(message);
    String value = "";
    String fix = "conf/, JAVA_OPTS -Dkey=value, or the environment variable";
    while (m.find()) {
      String key = m.group();
      try {
        if (config.hasPathOrNull(key) && !config.getIsNull(key)) {
          ConfigValue v = config.getValue(key);
          String from =
              ENV.containsKey(key) && origin(v).contains("env") ? ENV.get(key) : origin(v);
          value =
              SECRET.matcher(key).find()
                  ? ""
                  : " (" + key + " is " + v.render() + ", from " + from + ")";
          fix = fixAt(key, from);
          break;
        }
      } catch (ConfigException.BadPath notAKey) {
        // a dotted word that is not a config path: look further
      }
    }
    return "configuration: "
        + message
        + value
        + "; fix it ("
        + fix
        + "), then run bin/gateway --check";
  }

  /** Where to change {@code key}'s value, given where it came from. */
  private static String fixAt(String key, String from) {
    if (from.contains("system properties")) {
      return "JAVA_OPTS -D" + key + "=...";
    }
    if (ENV.containsValue(from)) {
      return "the environment variable " + from;
    }
    return from.contains("conf") || from.contains(".conf")
        ? from + ", or override it with JAVA_OPTS -D" + key + "=..."
        : "conf/, or JAVA_OPTS -D" + key + "=...";
  }

  private static String origin(ConfigValue v) {
    String description = v.origin().description();
    return description.replaceAll("^merge of ", "");
  }

  private static String oneLine(String message) {
    return message.replaceAll("\\s*\\R\\s*", " ").strip();
  }

  /** The data dir an H2 journal lives in, for messages; empty on another database. */
  static Optional<Path> dataDir(Config config) {
    return JournalDatabase.of(config).map(JournalDatabase::dataDir);
  }
}
