package dev.spendgateway.ledger.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the operator tools' writes look like after {@link DurableFiles}: the whole new file in place
 * of the old one, no partial left. (That the flushes reach the disk is not visible to a test; a run
 * under {@code strace -e fsync} shows them, see the commit that added this class.)
 */
class DurableFilesTest {
  @TempDir Path dir;

  @Test
  void aCompletePartialReplacesItsTargetWhole() throws IOException {
    Path target = dir.resolve("export.jsonl");
    Path partial = dir.resolve("export.jsonl.partial");
    Files.writeString(target, "old\n");
    Files.writeString(partial, "new 1\nnew 2\n");

    DurableFiles.moveIntoPlace(partial, target);

    assertEquals("new 1\nnew 2\n", Files.readString(target, StandardCharsets.UTF_8));
    assertFalse(Files.exists(partial));
  }

  @Test
  void aDirectoryAndAFileCanBeForced() throws IOException {
    Path file = Files.writeString(dir.resolve("backup.zip"), "zip");
    DurableFiles.force(file);
    DurableFiles.forceDirectory(dir);
    assertEquals("zip", Files.readString(file));
  }

  @Test
  void aFileThatIsNotThereIsAnError() {
    assertThrows(IOException.class, () -> DurableFiles.force(dir.resolve("missing")));
  }
}
