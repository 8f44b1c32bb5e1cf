package dev.rookery.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the extension looks for the command, in its order (docs/languages.md). */
class FindCommandTest {
  @TempDir
  Path tmp;

  private Path executable(Path file) throws Exception {
    Files.createDirectories(file.getParent());
    Files.writeString(file, "#!/bin/sh\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    return file;
  }

  @Test
  void theNearestNodeModulesBinThenThePath() throws Exception {
    Path project = tmp.resolve("project");
    Path local = executable(project.resolve("node_modules/.bin/rookery"));
    Path deep = Files.createDirectories(project.resolve("src/test/java"));
    Path onPath = executable(tmp.resolve("bin/rookery"));
    assertEquals(local.toString(), RookeryExtension.findCommand(deep, null, null, tmp.resolve("bin").toString()));
    // A nearer node_modules wins over the project's.
    Path nearer = executable(project.resolve("src/node_modules/.bin/rookery"));
    assertEquals(nearer.toString(), RookeryExtension.findCommand(deep, null, "", null));
    Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
    assertEquals(onPath.toString(), RookeryExtension.findCommand(elsewhere, null, null, "/nonexistent:" + tmp.resolve("bin")));
  }

  @Test
  void thePropertyThenRookeryBinWinAndMustBeExecutable() throws Exception {
    Path project = tmp.resolve("p");
    executable(project.resolve("node_modules/.bin/rookery"));
    Path chosen = executable(tmp.resolve("chosen/rookery-linux-x64"));
    Path other = executable(tmp.resolve("other/rookery-linux-x64"));
    assertEquals(chosen.toString(), RookeryExtension.findCommand(project, chosen.toString(), other.toString(), null));
    assertEquals(other.toString(), RookeryExtension.findCommand(project, null, other.toString(), null));
    Path plain = Files.writeString(tmp.resolve("not-executable"), "");
    RookeryException err = assertThrows(RookeryException.class, () -> RookeryExtension.findCommand(project, null, plain.toString(), null));
    assertTrue(err.getMessage().contains("ROOKERY_BIN is \"" + plain + "\", which is not an executable file"), err.getMessage());
  }

  @Test
  void noneFoundNamesEveryPlaceLookedAt() throws Exception {
    Path empty = Files.createDirectories(tmp.resolve("empty"));
    RookeryException err = assertThrows(RookeryException.class, () -> RookeryExtension.findCommand(empty, null, null, "/nonexistent"));
    for (String part : new String[] {"rookery.bin", "ROOKERY_BIN", "node_modules/.bin/rookery in " + empty, "PATH (/nonexistent)", "command(path)"}) {
      assertTrue(err.getMessage().contains(part), part + " in: " + err.getMessage());
    }
  }
}
