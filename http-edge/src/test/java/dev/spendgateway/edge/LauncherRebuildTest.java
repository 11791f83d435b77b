package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A launcher that rebuilds its jar (a source is newer than it) must not write the new jar into the
 * file a running JVM has open: Maven writes the shaded jar in place, and the running gateway then
 * read the new bytes where its old classes were. Seen: after {@code bin/gateway --demo} rebuilt
 * gateway.jar beside a running gateway, that gateway's SIGTERM handler died with {@code
 * NoClassDefFoundError} and it kept running (no drain, no stop); every class it had not loaded yet
 * was gone. The launcher runs here with a stand-in {@code mvn} that writes the jar in place as
 * Maven does, and a stand-in {@code java}; the "running JVM" is an open channel on the old jar.
 */
class LauncherRebuildTest {
  @TempDir Path root;

  @ParameterizedTest(name = "{0} rebuilds {1} beside a running JVM")
  @CsvSource({
    "bin/gateway,       http-edge/target/gateway.jar,        http-edge,    --version",
    "bin/gateway-admin, operator-cli/target/gateway-admin.jar, operator-cli, --version",
    "bin/loadtest,      loadtest/target/loadtest.jar,        loadtest,     --help"
  })
  void aRebuildLeavesTheJarARunningJvmHasOpenAsItWas(
      String script, String jar, String module, String arg) throws Exception {
    // Maven's shade and jar plugins write the jar in place: same file, new bytes.
    String out = launch(script, jar, module, arg, "#!/bin/sh\nprintf 'the new build' > 'JAR'\n", 0);
    assertEquals("the new build", Files.readString(root.resolve(jar)), out);
  }

  @ParameterizedTest(name = "{0}: a failed build of {1} leaves the old jar")
  @CsvSource({
    "bin/gateway,       http-edge/target/gateway.jar,        http-edge,    --version",
    "bin/gateway-admin, operator-cli/target/gateway-admin.jar, operator-cli, --version",
    "bin/loadtest,      loadtest/target/loadtest.jar,        loadtest,     --help"
  })
  void aFailedBuildPutsTheOldJarBack(String script, String jar, String module, String arg)
      throws Exception {
    String out = launch(script, jar, module, arg, "#!/bin/sh\nprintf 'half' > 'JAR'\nexit 1\n", -1);
    assertEquals("the running JVM's classes", Files.readString(root.resolve(jar)), out);
    assertEquals(false, Files.exists(root.resolve(jar + ".previous")), out);
  }

  /**
   * Runs {@code script arg} in a copy of the repository's layout whose {@code module} has a source
   * newer than {@code jar}, with {@code mvn} (JAR: the jar's path) as the build; the old jar is
   * held open meanwhile, as a running JVM holds it, and must read as before. {@code exit} -1:
   * non-zero.
   */
  private String launch(String script, String jar, String module, String arg, String mvn, int exit)
      throws Exception {
    Path repo = repoRoot();
    Path launcher = root.resolve(script);
    Files.createDirectories(launcher.getParent());
    Files.copy(repo.resolve(script), launcher);
    Path oldJar = root.resolve(jar);
    Files.createDirectories(oldJar.getParent());
    Files.writeString(oldJar, "the running JVM's classes");
    Files.setLastModifiedTime(oldJar, FileTime.from(Instant.parse("2026-01-01T00:00:00Z")));
    Path source = root.resolve(module).resolve("src/main/java/Changed.java");
    Files.createDirectories(source.getParent());
    Files.writeString(source, "class Changed {}");
    Files.writeString(root.resolve("pom.xml"), "<project/>");

    Path fakes = Files.createDirectories(root.resolve("fake-bin"));
    executable(fakes.resolve("mvn"), mvn.replace("JAR", oldJar.toString()));
    executable(fakes.resolve("java"), "#!/bin/sh\nexit 0\n");

    try (FileChannel running = FileChannel.open(oldJar, StandardOpenOption.READ)) {
      ProcessBuilder launch =
          new ProcessBuilder(List.of("bash", launcher.toString(), arg))
              .redirectErrorStream(true)
              .redirectOutput(root.resolve("launcher.out").toFile())
              .directory(root.toFile());
      launch.environment().put("PATH", fakes + ":" + System.getenv("PATH"));
      Process p = launch.start();
      p.getOutputStream().close();
      p.waitFor(60, TimeUnit.SECONDS);
      String out = Files.readString(root.resolve("launcher.out"));
      if (exit >= 0) {
        assertEquals(exit, p.exitValue(), out);
      } else {
        assertNotEquals(0, p.exitValue(), out);
      }
      assertEquals(
          "the running JVM's classes", read(running), "the running JVM's jar was overwritten");
      return out;
    }
  }

  private static String read(FileChannel channel) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(256);
    channel.read(buffer, 0);
    buffer.flip();
    return StandardCharsets.UTF_8.decode(buffer).toString();
  }

  private static void executable(Path file, String text) throws IOException {
    Files.writeString(file, text);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private static Path repoRoot() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.exists(p.resolve("bin/gateway")) && Files.exists(p.resolve("pom.xml"))) {
        return p;
      }
    }
    throw new IllegalStateException("no repository root above " + Path.of("").toAbsolutePath());
  }
}
