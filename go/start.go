package rookery

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Option configures Start.
type Option func(*config)

type config struct {
	command      []string
	args         []string
	users        map[string]string
	token        string
	env          []string
	startTimeout time.Duration
	stopTimeout  time.Duration
	keep         *bool
}

// WithCommand is the command to start: the executable's path, and for a
// command that needs an interpreter its arguments first
// (WithCommand("node", "dist/cli.js")). It beats every other place Start
// looks.
func WithCommand(argv ...string) Option {
	return func(c *config) { c.command = append([]string(nil), argv...) }
}

// WithPlugins loads plugins by name ("IDLE", "QUOTA", or "all").
func WithPlugins(names ...string) Option {
	return func(c *config) {
		for _, name := range names {
			c.args = append(c.args, "--plugin", name)
		}
	}
}

// WithPreset applies a provider's quirks (docs/presets.md), e.g. "gmail".
func WithPreset(name string) Option {
	return func(c *config) { c.args = append(c.args, "--preset", name) }
}

// WithUsers replaces the default user (testuser/testpass) by these, name to
// password. They are passed in a config file (--config), so Reset keeps them;
// do not pass another --config in WithArgs with it.
func WithUsers(users map[string]string) Option {
	return func(c *config) {
		if c.users == nil {
			c.users = map[string]string{}
		}
		for name, password := range users {
			c.users[name] = password
		}
	}
}

// WithSMTP turns the SMTP intake on, on a free port (Server.SMTPAddr).
func WithSMTP() Option {
	return func(c *config) { c.args = append(c.args, "--smtp-port", "0") }
}

// WithToken makes REST require this bearer token (--rest-token); the
// server's client sends it.
func WithToken(token string) Option {
	return func(c *config) { c.token = token }
}

// WithArgs adds command-line flags (docs/command.md), e.g. "--demo".
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// WithEnv adds "NAME=value" entries to the command's environment.
func WithEnv(entries ...string) Option {
	return func(c *config) { c.env = append(c.env, entries...) }
}

// WithStartTimeout bounds the wait for the ready line (default 30 s).
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) { c.startTimeout = d }
}

// WithKeepOnFailure overrides ROOKERY_KEEP for this server.
func WithKeepOnFailure(keep bool) Option {
	return func(c *config) { c.keep = &keep }
}

// Server is a running rookery command. Its embedded Client calls its REST API.
type Server struct {
	*Client
	// Version is the server's version, from the ready line.
	Version string
	IMAP    Address
	REST    Address
	// SMTP is nil unless WithSMTP (or --smtp-port in WithArgs) turned it on.
	SMTP *Address
	// LogFile holds what the command printed on stderr.
	LogFile string

	cmd    *exec.Cmd
	exited chan struct{}
}

// IMAPAddr is the IMAP listener as host:port.
func (s *Server) IMAPAddr() string {
	return net.JoinHostPort(s.IMAP.Host, strconv.Itoa(s.IMAP.Port))
}

// SMTPAddr is the SMTP listener as host:port, "" when SMTP is off.
func (s *Server) SMTPAddr() string {
	if s.SMTP == nil {
		return ""
	}
	return net.JoinHostPort(s.SMTP.Host, strconv.Itoa(s.SMTP.Port))
}

// RESTURL is the REST base URL, ending in /v1.
func (s *Server) RESTURL() string { return s.BaseURL }

// DashboardURL is the dashboard's page.
func (s *Server) DashboardURL() string { return strings.TrimSuffix(s.BaseURL, "v1") }

// PID is the command's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

type readyLine struct {
	Ready   bool    `json:"ready"`
	Version string  `json:"version"`
	IMAP    Address `json:"imap"`
	REST    *struct {
		Address
		URL string `json:"url"`
	} `json:"rest"`
	SMTP *Address `json:"smtp"`
}

// Start starts a server for the test: on free ports, REST on, its start and
// end marked in the event stream, stopped when the test and its subtests
// end. It fails the test (t.Fatal) when the command cannot be found or does
// not become ready.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{startTimeout: 30 * time.Second, stopTimeout: 10 * time.Second}
	for _, opt := range opts {
		opt(&cfg)
	}
	srv, err := launch(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	keep := keepRequested()
	if cfg.keep != nil {
		keep = *cfg.keep
	}
	t.Cleanup(func() { finish(t, srv, keep, cfg.stopTimeout) })
	if _, err := srv.Mark(markText(t.Name()), PhaseStart, NoOutcome); err != nil {
		t.Fatal(err)
	}
	return srv
}

func keepRequested() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("ROOKERY_KEEP"))) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// markText fits a test name into a mark's 1 to 1024 characters.
func markText(name string) string {
	if name == "" {
		return "test"
	}
	if r := []rune(name); len(r) > 1024 {
		return string(r[:1024])
	}
	return name
}

func launch(cfg *config) (*Server, error) {
	command, err := findCommand(cfg.command)
	if err != nil {
		return nil, err
	}
	args := append([]string{}, command[1:]...)
	args = append(args, "--port", "0", "--rest-port", "0", "--ready-json")
	if cfg.token != "" {
		args = append(args, "--rest-token", cfg.token)
	}
	var cleanup []string
	if cfg.users != nil {
		file, err := writeUsersConfig(cfg.users)
		if err != nil {
			return nil, err
		}
		cleanup = append(cleanup, file)
		args = append(args, "--config", file)
	}
	args = append(args, cfg.args...)

	// stderr goes to a file, not a pipe: a server kept open for a failed
	// test outlives this process, and writing to a pipe nobody reads would
	// end it.
	logFile, err := os.CreateTemp("", "rookery-*.log")
	if err != nil {
		return nil, fmt.Errorf("rookery: %w", err)
	}
	defer logFile.Close()
	stdout, stdoutWriter, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("rookery: %w", err)
	}
	defer stdout.Close()

	cmd := exec.Command(command[0], args...)
	cmd.Env = append(environment(), cfg.env...)
	cmd.Stdout = stdoutWriter
	cmd.Stderr = logFile
	err = cmd.Start()
	stdoutWriter.Close()
	for _, file := range cleanup {
		defer os.Remove(file)
	}
	if err != nil {
		os.Remove(logFile.Name())
		return nil, fmt.Errorf("rookery: starting %s: %w", strings.Join(command, " "), err)
	}
	srv := &Server{LogFile: logFile.Name(), cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(srv.exited)
	}()

	lines := make(chan string, 1)
	go func() {
		// The ready line is the only thing the command prints on stdout;
		// later output, if any, is read and dropped so the pipe never fills.
		reader := bufio.NewReader(stdout)
		line, _ := reader.ReadString('\n')
		lines <- line
		_, _ = reader.WriteTo(discard{})
	}()
	fail := func(format string, a ...any) (*Server, error) {
		_ = cmd.Process.Kill()
		<-srv.exited
		logText, _ := os.ReadFile(srv.LogFile)
		os.Remove(srv.LogFile)
		return nil, fmt.Errorf("rookery: "+format+" (%s, exit %s): %s", append(a, strings.Join(command, " "), cmd.ProcessState, strings.TrimSpace(string(logText)))...)
	}
	var line string
	select {
	case line = <-lines:
	case <-time.After(cfg.startTimeout):
		return fail("no ready line within %s", cfg.startTimeout)
	}
	var ready readyLine
	if line == "" {
		return fail("the command ended before it was ready")
	}
	if err := json.Unmarshal([]byte(line), &ready); err != nil || !ready.Ready || ready.REST == nil {
		return fail("not a ready line: %q", strings.TrimSpace(line))
	}
	srv.Version, srv.IMAP, srv.REST, srv.SMTP = ready.Version, ready.IMAP, ready.REST.Address, ready.SMTP
	srv.Client = NewClient(ready.REST.URL, cfg.token)
	return srv, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// environment is this process's without NODE_OPTIONS: the single executable
// is node and would apply a Node test runner's preloads before the command
// starts (docs/languages.md).
func environment() []string {
	var env []string
	for _, entry := range os.Environ() {
		if !strings.HasPrefix(entry, "NODE_OPTIONS=") {
			env = append(env, entry)
		}
	}
	return env
}

func writeUsersConfig(users map[string]string) (string, error) {
	type user struct {
		Password string `json:"password"`
	}
	listed := map[string]user{}
	for name, password := range users {
		listed[name] = user{password}
	}
	data, err := json.Marshal(map[string]any{"users": listed})
	if err != nil {
		return "", fmt.Errorf("rookery: %w", err)
	}
	file, err := os.CreateTemp("", "rookery-config-*.json")
	if err != nil {
		return "", fmt.Errorf("rookery: %w", err)
	}
	defer file.Close()
	if _, err := file.Write(data); err != nil {
		os.Remove(file.Name())
		return "", fmt.Errorf("rookery: %w", err)
	}
	return file.Name(), nil
}

// Stop shuts the server down over REST and waits for it to exit, killing it
// after timeout; then its log file is removed. Start's cleanup calls it;
// calling it again is harmless.
func (s *Server) Stop(timeout time.Duration) error {
	defer os.Remove(s.LogFile)
	select {
	case <-s.exited:
		return nil
	default:
	}
	err := s.Do("POST", "/shutdown", nil, nil)
	if err == nil {
		select {
		case <-s.exited:
			if code := s.cmd.ProcessState.ExitCode(); code != 0 {
				return fmt.Errorf("rookery: the server exited with code %d after /v1/shutdown: %s", code, readLog(s))
			}
			return nil
		case <-time.After(timeout):
			err = fmt.Errorf("rookery: the server did not exit within %s of /v1/shutdown; killed", timeout)
		}
	}
	select {
	case <-s.exited:
		// It ended by itself meanwhile (a signal, a crash): nothing to stop.
		if s.cmd.ProcessState.Success() {
			return nil
		}
		return fmt.Errorf("rookery: the server ended by itself (%s): %s", s.cmd.ProcessState, readLog(s))
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	return err
}

var (
	keptMu sync.Mutex
	kept   *Server
)

func finish(t testing.TB, srv *Server, keep bool, stopTimeout time.Duration) {
	failed := t.Failed()
	outcome := Pass
	if failed {
		outcome = Fail
	}
	if _, err := srv.Mark(markText(t.Name()), PhaseEnd, outcome); err != nil {
		select {
		case <-srv.exited:
			t.Errorf("rookery: the server ended before the test did (%s); its log:\n%s", srv.cmd.ProcessState, readLog(srv))
			os.Remove(srv.LogFile)
			return
		default:
			t.Error(err)
		}
	}
	if failed && keep {
		line := fmt.Sprintf("rookery: test %q failed; its server stays open as the test left it: IMAP %s, dashboard %s, REST %s (pid %d, log %s)",
			t.Name(), srv.IMAPAddr(), srv.DashboardURL(), srv.RESTURL(), srv.PID(), srv.LogFile)
		t.Log(line)
		fmt.Fprintln(os.Stderr, line)
		keptMu.Lock()
		before := kept
		kept = srv
		keptMu.Unlock()
		// Only the last failed test's server is kept, as with the Node helper.
		if before != nil {
			_ = before.Stop(stopTimeout)
		}
		return
	}
	if err := srv.Stop(stopTimeout); err != nil {
		t.Error(err)
	}
}

func readLog(srv *Server) string {
	data, _ := os.ReadFile(srv.LogFile)
	return strings.TrimSpace(string(data))
}

// Main runs the tests (m.Run) and, when ROOKERY_KEEP=1 kept a failed test's
// server, waits until the process is interrupted (Ctrl-C) so that server can
// be looked at, then stops it. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(rookery.Main(m)) }
//
// Without it a kept server outlives `go test`; its line names its pid.
func Main(m *testing.M) int {
	code := m.Run()
	keptMu.Lock()
	srv := kept
	kept = nil
	keptMu.Unlock()
	if srv == nil {
		return code
	}
	select {
	case <-srv.exited:
		return code
	default:
	}
	fmt.Fprintf(os.Stderr, "rookery: the failed test's server stays up until this process is stopped (Ctrl-C): dashboard %s\n", srv.DashboardURL())
	waitForInterrupt(srv.exited)
	_ = srv.Stop(10 * time.Second)
	return code
}
