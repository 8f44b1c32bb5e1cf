package dev.rookery.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A start that fails says why: the command's own message, or the time it was given. */
class StartTest {
  @TempDir
  Path tmp;

  @Test
  void aCommandThatRefusesItsFlagsFailsWithItsMessage() {
    RookeryExtension ext = RookeryExtension.builder().args("--no-such-flag").build();
    RookeryException err = assertThrows(RookeryException.class, () -> ext.beforeAll(null));
    assertTrue(err.getMessage().contains("exit code 1"), err.getMessage());
    assertTrue(err.getMessage().contains("unknown option --no-such-flag"), err.getMessage());
  }

  @Test
  void aCommandThatNeverGetsReadyIsStoppedAfterTheStartTimeout() throws Exception {
    Path silent = tmp.resolve("silent-rookery");
    Files.writeString(silent, "#!/bin/sh\necho 'starting, slowly' >&2\nexec sleep 30\n");
    Files.setPosixFilePermissions(silent, PosixFilePermissions.fromString("rwxr-xr-x"));
    RookeryExtension ext = RookeryExtension.builder().command(silent).startTimeout(Duration.ofMillis(500)).build();
    long started = System.nanoTime();
    RookeryException err = assertThrows(RookeryException.class, () -> ext.beforeAll(null));
    assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(10)) < 0, "it waited for sleep 30");
    assertTrue(err.getMessage().startsWith("rookery did not become ready within 500 ms"), err.getMessage());
    assertTrue(err.getMessage().contains("starting, slowly"), err.getMessage());
  }

  @Test
  void aCommandThatPrintsNoReadyLineIsNotMistakenForOne() throws Exception {
    Path other = tmp.resolve("not-rookery");
    Files.writeString(other, "#!/bin/sh\necho 'hello'\nexec sleep 30\n");
    Files.setPosixFilePermissions(other, PosixFilePermissions.fromString("rwxr-xr-x"));
    RookeryExtension ext = RookeryExtension.builder().command(other.toString()).build();
    RookeryException err = assertThrows(RookeryException.class, () -> ext.beforeAll(null));
    assertEquals("rookery printed no ready line (is this the rookery command?): hello", err.getMessage());
  }
}
