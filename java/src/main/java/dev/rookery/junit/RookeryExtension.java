package dev.rookery.junit;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Rookery for JUnit 5: starts the {@code rookery} command (the single executable or the npm package's) on free
 * ports before the class's tests, resets it and marks each test's start and end in its event stream, and stops it
 * after them.
 *
 * <pre>{@code
 * @RegisterExtension
 * static RookeryExtension rookery = RookeryExtension.builder().plugins("all").build();
 *
 * @Test
 * void seesADelivery() {
 *   rookery.client().addMessage("INBOX", "Subject: hi\r\n\r\nhello\r\n");
 *   // connect an IMAP client to rookery.imapHost(), rookery.imapPort() as testuser/testpass
 * }
 * }</pre>
 *
 * <p>Registered in a static field it starts once per class; in an instance field, once per test.
 *
 * <p>With {@code ROOKERY_KEEP=1} in the environment (or {@link Builder#keepOnFailure(boolean)}), a failed test's
 * server stays up as the test left it: its addresses are printed on stderr, the next tests get a new server, and
 * after the class's last test the extension waits until the process is stopped (Ctrl-C) before it stops the kept
 * one. The same as the Node and Python helpers (docs/testing.md).
 */
public final class RookeryExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  /** Longest mark text the API takes. */
  private static final int MAX_MARK_TEXT = 1024;
  /** Lines of the command's stderr kept for an error message. */
  private static final int STDERR_LINES = 200;

  private final String commandGiven;
  private final List<String> args;
  private final String token;
  private final Duration startTimeout;
  private final boolean resetBetweenTests;
  private final boolean markTests;
  private final boolean keepOnFailure;
  private final Map<String, String> environment;

  private Running running;
  private Running kept;
  private String keptName;
  private boolean perClass;

  private RookeryExtension(Builder b) {
    this.commandGiven = b.command;
    List<String> a = new ArrayList<>();
    if (b.plugins != null) {
      a.add("--plugin");
      a.add(String.join(",", b.plugins));
    }
    if (b.smtp) {
      a.add("--smtp-port");
      a.add("0");
    }
    a.addAll(b.args);
    this.args = List.copyOf(a);
    this.token = b.token;
    this.startTimeout = b.startTimeout;
    this.resetBetweenTests = b.resetBetweenTests;
    this.markTests = b.markTests;
    this.keepOnFailure = b.keepOnFailure != null ? b.keepOnFailure : keepFromEnvironment();
    this.environment = Map.copyOf(b.environment);
  }

  public static Builder builder() {
    return new Builder();
  }

  // -- the command -----------------------------------------------------------------------------------------------

  /**
   * Where the {@code rookery} command is, in this order: the system property {@code rookery.bin}, the environment
   * variable {@code ROOKERY_BIN}, {@code node_modules/.bin/rookery} of {@code dir} or of its nearest parent that has
   * one, {@code rookery} on the PATH. RookeryException names every place looked at when there is none.
   */
  public static String findCommand(Path dir) {
    return findCommand(dir, System.getProperty("rookery.bin"), System.getenv("ROOKERY_BIN"), System.getenv("PATH"));
  }

  /** {@link #findCommand(Path)} with the property's and the variables' values given (its tests set them). */
  static String findCommand(Path dir, String property, String rookeryBin, String path) {
    for (String[] chosen : new String[][] {{"the system property rookery.bin", property}, {"ROOKERY_BIN", rookeryBin}}) {
      String value = chosen[1];
      if (value == null || value.isEmpty()) continue;
      if (!Files.isRegularFile(Paths.get(value)) || !Files.isExecutable(Paths.get(value))) {
        throw new RookeryException("rookery command not found: " + chosen[0] + " is " + Json.write(value) + ", which is not an executable file");
      }
      return value;
    }
    for (Path here = dir.toAbsolutePath(); here != null; here = here.getParent()) {
      Path local = here.resolve("node_modules").resolve(".bin").resolve("rookery");
      if (Files.isRegularFile(local) && Files.isExecutable(local)) return local.toString();
    }
    if (path != null) {
      for (String entry : path.split(File.pathSeparator)) {
        if (entry.isEmpty()) continue;
        Path candidate = Paths.get(entry, "rookery");
        if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return candidate.toString();
      }
    }
    throw new RookeryException("rookery command not found: the system property rookery.bin and ROOKERY_BIN are not set, there is no "
        + "node_modules/.bin/rookery in " + dir.toAbsolutePath() + " or any parent directory, and none on the PATH (" + path
        + "); install the package in the project, or set ROOKERY_BIN to the single executable's path, or use builder().command(path)");
  }

  private static boolean keepFromEnvironment() {
    String v = System.getenv("ROOKERY_KEEP");
    if (v == null) return false;
    v = v.trim().toLowerCase(Locale.ROOT);
    return v.equals("1") || v.equals("true") || v.equals("yes");
  }

  /** A started command: its process, its ready line, and a REST client of it. */
  private static final class Running {
    final Process process;
    final Map<String, Object> ready;
    final RookeryClient client;
    final Thread onExit;

    Running(Process process, Map<String, Object> ready, RookeryClient client, Thread onExit) {
      this.process = process;
      this.ready = ready;
      this.client = client;
      this.onExit = onExit;
    }
  }

  private Running start() {
    // Looked up when the class starts rather than when the field is built, so a missing command fails the class's
    // tests with the message instead of failing to initialize the class.
    List<String> command = List.of(commandGiven != null ? commandGiven : findCommand(Paths.get("").toAbsolutePath()));
    List<String> argv = new ArrayList<>(command);
    argv.addAll(Arrays.asList("--port", "0", "--rest-port", "0", "--ready-json"));
    argv.addAll(args);
    if (token != null) {
      argv.add("--rest-token");
      argv.add(token);
    }
    ProcessBuilder pb = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    // The single executable is node: it would apply a NODE_OPTIONS meant for some Node test runner (a preload it
    // cannot find stops it before the command runs), so it never gets one.
    pb.environment().remove("NODE_OPTIONS");
    pb.environment().putAll(environment);
    Process process;
    try {
      process = pb.start();
    } catch (IOException err) {
      throw new RookeryException("rookery command could not be started: " + String.join(" ", command) + " (" + err.getMessage() + ")", 0, null, err);
    }
    Deque<String> stderr = new ArrayDeque<>();
    Thread drain = daemon("rookery-stderr", () -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          synchronized (stderr) {
            if (stderr.size() == STDERR_LINES) stderr.removeFirst();
            stderr.addLast(line);
          }
        }
      } catch (IOException closed) {
        // the process ended
      }
    });
    CompletableFuture<String> readyLine = new CompletableFuture<>();
    daemon("rookery-stdout", () -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        readyLine.complete(r.readLine());
        // Nothing more comes on stdout; reading on keeps the pipe from ever filling.
        while (r.readLine() != null) {
          // discard
        }
      } catch (IOException err) {
        readyLine.complete(null);
      }
    });
    String line;
    try {
      line = readyLine.get(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException err) {
      line = null;
    } catch (InterruptedException err) {
      Thread.currentThread().interrupt();
      line = null;
    }
    if (line == null) {
      process.destroyForcibly();
      try {
        process.waitFor(5, TimeUnit.SECONDS);
        drain.join(2000); // the reason is on stderr: read it all before reporting
      } catch (InterruptedException err) {
        Thread.currentThread().interrupt();
      }
      String exit = process.isAlive() ? "still running" : "exit code " + process.exitValue();
      String reason;
      synchronized (stderr) {
        reason = String.join("\n", stderr).trim();
      }
      throw new RookeryException("rookery did not become ready within " + startTimeout.toMillis() + " ms (" + exit + "): " + reason);
    }
    Map<String, Object> ready;
    try {
      ready = RookeryClient.asMap(Json.parse(line));
    } catch (RuntimeException err) {
      process.destroyForcibly();
      throw new RookeryException("rookery printed no ready line (is this the rookery command?): " + line, 0, null, err);
    }
    String restUrl = (String) RookeryClient.asMap(ready.get("rest")).get("url");
    // A JVM that ends before afterAll (System.exit, Ctrl-C) takes its servers with it.
    Thread onExit = new Thread(process::destroyForcibly, "rookery-stop");
    Runtime.getRuntime().addShutdownHook(onExit);
    return new Running(process, ready, new RookeryClient(restUrl, token), onExit);
  }

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** POST /v1/shutdown and wait; destroy the process when that fails or it does not end in time. */
  private static void shutdown(Running r) {
    if (r == null) return;
    if (r.process.isAlive()) {
      try {
        r.client.shutdown();
        if (!r.process.waitFor(15, TimeUnit.SECONDS)) throw new RookeryException("rookery did not stop within 15 s");
      } catch (RuntimeException err) {
        r.process.destroyForcibly();
      } catch (InterruptedException err) {
        Thread.currentThread().interrupt();
        r.process.destroyForcibly();
      }
    }
    try {
      Runtime.getRuntime().removeShutdownHook(r.onExit);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
  }

  // -- JUnit callbacks --------------------------------------------------------------------------------------------

  @Override
  public void beforeAll(ExtensionContext context) {
    perClass = true;
    if (running == null) running = start();
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (running == null) running = start();
    if (resetBetweenTests) running.client.reset();
    if (markTests) running.client.mark(markText(context), "start", null);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    boolean failed = context.getExecutionException().isPresent();
    if (markTests && running != null && running.process.isAlive()) running.client.mark(markText(context), "end", failed ? "fail" : "pass");
    if (failed && keepOnFailure && running != null) {
      Running before = kept;
      kept = running;
      keptName = context.getDisplayName();
      System.err.println(keptLine(keptName, kept.ready));
      System.err.flush();
      running = null;
      shutdown(before);
    }
    if (!perClass) stopAll();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    stopAll();
  }

  private void stopAll() {
    shutdown(running);
    running = null;
    Running k = kept;
    kept = null;
    if (k == null || !k.process.isAlive()) return;
    System.err.println(keptLine(keptName, k.ready) + ". It stays up until this process is stopped (Ctrl-C).");
    System.err.flush();
    try {
      k.process.waitFor();
    } catch (InterruptedException err) {
      Thread.currentThread().interrupt();
    } finally {
      shutdown(k);
    }
  }

  private static String markText(ExtensionContext context) {
    String name = context.getDisplayName();
    return name.length() > MAX_MARK_TEXT ? name.substring(0, MAX_MARK_TEXT) : name;
  }

  private static String keptLine(String name, Map<String, Object> ready) {
    Map<String, Object> imap = RookeryClient.asMap(ready.get("imap"));
    String rest = (String) RookeryClient.asMap(ready.get("rest")).get("url");
    return "rookery: test " + Json.write(name) + " failed; its server stays open as the test left it: IMAP " + imap.get("host") + ":" + imap.get("port")
        + ", dashboard " + rest.substring(0, rest.length() - "v1".length()) + ", REST " + rest;
  }

  // -- what tests use ---------------------------------------------------------------------------------------------

  private Running current() {
    if (running == null) throw new IllegalStateException("rookery is not running: register the RookeryExtension with @RegisterExtension and use it inside a test");
    return running;
  }

  /** The whole {@code --ready-json} line of the running server. */
  public Map<String, Object> ready() {
    return current().ready;
  }

  public RookeryClient client() {
    return current().client;
  }

  public String imapHost() {
    return (String) RookeryClient.asMap(ready().get("imap")).get("host");
  }

  public int imapPort() {
    return ((Number) RookeryClient.asMap(ready().get("imap")).get("port")).intValue();
  }

  /** The REST base URL, e.g. {@code http://127.0.0.1:40124/v1}. */
  public String restUrl() {
    return client().baseUrl();
  }

  public String smtpHost() {
    return (String) smtp().get("host");
  }

  /** The SMTP intake's port; IllegalStateException when it is off (build with {@code .smtp()}). */
  public int smtpPort() {
    return ((Number) smtp().get("port")).intValue();
  }

  private Map<String, Object> smtp() {
    Object smtp = ready().get("smtp");
    if (smtp == null) throw new IllegalStateException("SMTP intake is off: build the extension with .smtp() (--smtp-port 0)");
    return RookeryClient.asMap(smtp);
  }

  /** Whether a failed test's server is kept open ({@code ROOKERY_KEEP=1} or the builder). */
  public boolean keepsOnFailure() {
    return keepOnFailure;
  }

  /** How the extension starts the command. */
  public static final class Builder {
    private String command;
    private List<String> plugins;
    private final List<String> args = new ArrayList<>();
    private String token;
    private Duration startTimeout = Duration.ofSeconds(30);
    private boolean smtp;
    private boolean resetBetweenTests = true;
    private boolean markTests = true;
    private Boolean keepOnFailure;
    private final Map<String, String> environment = new LinkedHashMap<>();

    private Builder() {}

    /** The executable's path (default: see {@link RookeryExtension#findCommand}). */
    public Builder command(String path) {
      this.command = path;
      return this;
    }

    public Builder command(Path path) {
      return command(path.toString());
    }

    /** {@code --plugin}: {@code "all"}, {@code "none"}, or extension names. */
    public Builder plugins(String... names) {
      this.plugins = List.of(names);
      return this;
    }

    /** More flags of the command, e.g. {@code "--preset", "gmail"} or {@code "--storage", "fixtures.json"}. */
    public Builder args(String... flags) {
      this.args.addAll(Arrays.asList(flags));
      return this;
    }

    /** SMTP intake on a free port ({@code --smtp-port 0}). */
    public Builder smtp() {
      this.smtp = true;
      return this;
    }

    /** A REST token ({@code --rest-token}); the client sends it. */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /** How long to wait for the ready line (default 30 s). */
    public Builder startTimeout(Duration timeout) {
      this.startTimeout = timeout;
      return this;
    }

    /** Reset the server before each test (default true). */
    public Builder resetBetweenTests(boolean reset) {
      this.resetBetweenTests = reset;
      return this;
    }

    /** Put {@code mark} events at each test's start and end (default true). */
    public Builder markTests(boolean mark) {
      this.markTests = mark;
      return this;
    }

    /** Keep a failed test's server open (default: {@code ROOKERY_KEEP=1} in the environment). */
    public Builder keepOnFailure(boolean keep) {
      this.keepOnFailure = keep;
      return this;
    }

    /** An environment variable of the command (e.g. {@code ROOKERY_SCRIPT_SEED}). */
    public Builder env(String name, String value) {
      this.environment.put(name, value);
      return this;
    }

    public RookeryExtension build() {
      return new RookeryExtension(this);
    }
  }
}
