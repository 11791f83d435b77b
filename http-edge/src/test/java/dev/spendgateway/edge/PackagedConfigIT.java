package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import dev.spendgateway.edge.testkit.GatewayProcess;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The packaged jars see the configuration the tests see. A shaded jar joins every module's
 * reference.conf into one file, in dependency order, and a later file's key wins: the persistence
 * plugin's reference.conf, joined after the ledger's, once set the snapshot store back to the
 * plugin's own, which never deletes an old snapshot, in the shipped gateway only. So every key this
 * project's files set (each module's reference.conf, conf/) must have the same value in the jar,
 * run as bin/gateway and bin/gateway-admin run it (conf/ on the class path before the jar), as on
 * the modules' own class path.
 */
class PackagedConfigIT {

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"http-edge/target/gateway.jar", "operator-cli/target/gateway-admin.jar"})
  void everyKeyOfOursHasItsOwnValueInThePackagedJar(String jar) throws Exception {
    Path root = GatewayProcess.root();
    Config onTestClassPath = ConfigFactory.load();
    List<String> differences = new ArrayList<>();
    int checked = 0;
    try (URLClassLoader packaged =
        new URLClassLoader(
            new URL[] {root.resolve("conf").toUri().toURL(), root.resolve(jar).toUri().toURL()},
            ClassLoader.getPlatformClassLoader())) {
      Object packagedConfig = loadIn(packaged);
      // Through the jar's own interfaces: its implementation classes are not public.
      Class<?> configType = Class.forName("com.typesafe.config.Config", false, packaged);
      Method hasPath = configType.getMethod("hasPath", String.class);
      Method getValue = configType.getMethod("getValue", String.class);
      Class<?> renderOptions =
          Class.forName("com.typesafe.config.ConfigRenderOptions", false, packaged);
      Object concise = renderOptions.getMethod("concise").invoke(null);
      Method render =
          Class.forName("com.typesafe.config.ConfigValue", false, packaged)
              .getMethod("render", renderOptions);
      for (String key : keysOfOurFiles(root)) {
        if (!onTestClassPath.hasPath(key)) {
          continue; // an optional env substitution left unset here
        }
        checked++;
        String expected = onTestClassPath.getValue(key).render(ConfigRenderOptions.concise());
        String packagedValue =
            (boolean) hasPath.invoke(packagedConfig, key)
                ? (String) render.invoke(getValue.invoke(packagedConfig, key), concise)
                : "(absent)";
        if (!expected.equals(packagedValue)) {
          differences.add(
              key + ": " + expected + " on the class path, " + packagedValue + " in " + jar);
        }
      }
    }
    assertTrue(checked > 100, "too few keys compared (" + checked + "): the files were not found");
    assertEquals(List.of(), differences, "keys the packaged jar sees otherwise");
  }

  /** ConfigFactory.load() as the jar's own classes run it (conf/application.conf, then the jar). */
  private static Object loadIn(ClassLoader packaged) throws Exception {
    Thread thread = Thread.currentThread();
    ClassLoader before = thread.getContextClassLoader();
    thread.setContextClassLoader(packaged);
    try {
      Class<?> factory = Class.forName("com.typesafe.config.ConfigFactory", true, packaged);
      factory.getMethod("invalidateCaches").invoke(null);
      return factory.getMethod("load", ClassLoader.class).invoke(null, packaged);
    } finally {
      thread.setContextClassLoader(before);
      ConfigFactory.invalidateCaches();
    }
  }

  /** The leaf keys set in conf/*.conf and in every module's src/main/resources/reference.conf. */
  private static TreeSet<String> keysOfOurFiles(Path root) throws Exception {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> conf = Files.list(root.resolve("conf"))) {
      conf.filter(p -> p.toString().endsWith(".conf")).forEach(files::add);
    }
    try (Stream<Path> modules = Files.list(root)) {
      modules
          .map(m -> m.resolve("src/main/resources/reference.conf"))
          .filter(Files::isRegularFile)
          .forEach(files::add);
    }
    TreeSet<String> keys = new TreeSet<>();
    for (Path file : files) {
      // Unresolved: ${?ENV} substitutions stay as written; only the keys matter here.
      collectLeaves(ConfigFactory.parseFile(file.toFile()).root(), List.of(), keys);
    }
    return keys;
  }

  private static void collectLeaves(ConfigObject object, List<String> path, TreeSet<String> keys) {
    for (Map.Entry<String, ConfigValue> entry : object.entrySet()) {
      List<String> here = new ArrayList<>(path);
      here.add(entry.getKey());
      if (entry.getValue() instanceof ConfigObject inner) {
        collectLeaves(inner, here, keys);
      } else {
        keys.add(ConfigUtil.joinPath(here));
      }
    }
  }
}
