package rookery

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeT is a test whose end this file controls: Cleanup collects instead of
// registering, Failed answers what the test says. The rest goes to the real t.
type fakeT struct {
	testing.TB
	name     string
	failed   bool
	cleanups []func()
	errors   []string
}

func (f *fakeT) Error(args ...any) { f.errors = append(f.errors, fmt.Sprint(args...)) }
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeT) Name() string      { return f.name }
func (f *fakeT) Failed() bool      { return f.failed }
func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestAFailedTestsServerIsKeptWithRookeryKeep(t *testing.T) {
	t.Setenv("ROOKERY_KEEP", "1")
	fake := &fakeT{TB: t, name: "TestSync/moves the draft", failed: true}
	srv := Start(fake)
	t.Cleanup(func() {
		keptMu.Lock()
		kept = nil
		keptMu.Unlock()
		_ = srv.Stop(5 * time.Second)
	})
	fake.end()
	if _, err := srv.Health(); err != nil {
		t.Fatalf("the failed test's server was stopped: %v", err)
	}
	keptMu.Lock()
	isKept := kept == srv
	keptMu.Unlock()
	if !isKept {
		t.Fatal("the failed test's server is not the one Main waits for")
	}
	ev, err := srv.WaitFor("mark", Since(0), Match("phase", "end"))
	if err != nil {
		t.Fatal(err)
	}
	var data struct{ Text, Phase, Outcome string }
	if err := json.Unmarshal(ev.Data, &data); err != nil || data != (struct{ Text, Phase, Outcome string }{fake.name, "end", "fail"}) {
		t.Fatalf("end mark %s (%v)", ev.Data, err)
	}

	// The next failed test's server is kept instead; the first one stops.
	second := &fakeT{TB: t, name: "TestOther", failed: true}
	next := Start(second)
	t.Cleanup(func() { _ = next.Stop(5 * time.Second) })
	second.end()
	select {
	case <-srv.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the first kept server is still running")
	}
	if _, err := next.Health(); err != nil {
		t.Fatal(err)
	}
}

func TestWithoutRookeryKeepAFailedTestsServerStops(t *testing.T) {
	t.Setenv("ROOKERY_KEEP", "")
	fake := &fakeT{TB: t, name: "TestFails", failed: true}
	srv := Start(fake)
	fake.end()
	select {
	case <-srv.exited:
	default:
		t.Fatal("the server is still running after the test's cleanup")
	}
	if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after /v1/shutdown", code)
	}
	if _, err := os.Stat(srv.LogFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("log file left behind: %v", err)
	}
}

func TestAPassingTestsEndIsMarkedPass(t *testing.T) {
	t.Setenv("ROOKERY_KEEP", "1")
	fake := &fakeT{TB: t, name: "TestPasses"}
	srv := Start(fake)
	waited := make(chan Event, 1)
	go func() {
		ev, err := srv.WaitFor("mark", Match("phase", "end"), Timeout(10*time.Second))
		if err != nil {
			t.Error(err)
		}
		waited <- ev
	}()
	// The wait's connection is open (this health request's is the other)
	// before the test ends, so its answer comes before the shutdown.
	for deadline := time.Now().Add(5 * time.Second); ; {
		var health struct {
			Connections struct {
				REST struct{ Open int } `json:"rest"`
			} `json:"connections"`
		}
		if err := srv.Do("GET", "/health", nil, &health); err != nil {
			t.Fatal(err)
		}
		if health.Connections.REST.Open >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the wait never reached the server")
		}
		time.Sleep(20 * time.Millisecond)
	}
	fake.end()
	ev := <-waited
	var data struct{ Text, Outcome string }
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.Text != "TestPasses" || data.Outcome != "pass" {
		t.Fatalf("end mark %s (%v)", ev.Data, err)
	}
	select {
	case <-srv.exited:
	default:
		t.Fatal("a passing test's server was kept")
	}
}

func TestNodeOptionsAreLeftOut(t *testing.T) {
	// The single executable is node: a preload it cannot find would stop it.
	t.Setenv("NODE_OPTIONS", "--require /nonexistent/rookery-preload.js")
	srv := Start(t)
	if _, err := srv.Health(); err != nil {
		t.Fatal(err)
	}
}

func TestFindCommand(t *testing.T) {
	exe := os.Getenv("ROOKERY_BIN")
	if exe == "" {
		t.Skip("ROOKERY_BIN not set")
	}
	root := t.TempDir()
	bin := filepath.Join(root, "node_modules", ".bin")
	deep := filepath.Join(root, "pkg", "sub")
	for _, dir := range []string{bin, deep} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(exe, filepath.Join(bin, "rookery")); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { _ = os.Chdir(wd) })
	if err := os.Chdir(deep); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "")

	got, err := findCommand([]string{"/opt/x", "y"})
	if err != nil || strings.Join(got, " ") != "/opt/x y" {
		t.Fatalf("WithCommand: %v %v", got, err)
	}
	if got, err := findCommand(nil); err != nil || len(got) != 1 || got[0] != exe {
		t.Fatalf("ROOKERY_BIN: %v %v", got, err)
	}
	t.Setenv("ROOKERY_BIN", filepath.Join(root, "pkg"))
	if _, err := findCommand(nil); err == nil || !strings.Contains(err.Error(), "not an executable file") {
		t.Fatalf("ROOKERY_BIN of a directory: %v", err)
	}
	t.Setenv("ROOKERY_BIN", "")
	if got, err := findCommand(nil); err != nil || len(got) != 1 || got[0] != filepath.Join(bin, "rookery") {
		t.Fatalf("node_modules/.bin of a parent: %v %v", got, err)
	}
	// It runs from there too.
	srv := Start(t)
	if _, err := srv.Health(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(bin, "rookery")); err != nil {
		t.Fatal(err)
	}
	_, err = findCommand(nil)
	if err == nil || !strings.Contains(err.Error(), "ROOKERY_BIN") || !strings.Contains(err.Error(), "node_modules/.bin/rookery") || !strings.Contains(err.Error(), "PATH") {
		t.Fatalf("nothing found: %v", err)
	}
}

func TestStartFailuresSaySo(t *testing.T) {
	_, err := launch(&config{command: []string{"sh", "-c", "echo no such flag >&2; exit 3"}, startTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "ended before it was ready") || !strings.Contains(err.Error(), "no such flag") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("a command that exits: %v", err)
	}
	began := time.Now()
	_, err = launch(&config{command: []string{"sh", "-c", "exec sleep 30"}, startTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no ready line within 300ms") || time.Since(began) > 5*time.Second {
		t.Fatalf("a command that never gets ready: %v", err)
	}
	_, err = launch(&config{command: []string{"sh", "-c", "echo hello"}, startTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), `not a ready line: "hello"`) {
		t.Fatalf("a command that prints something else: %v", err)
	}
}

func TestAServerThatEndedEarlyFailsTheTest(t *testing.T) {
	fake := &fakeT{TB: t, name: "TestCrash"}
	srv := Start(fake)
	if err := srv.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-srv.exited
	fake.end()
	if len(fake.errors) != 1 || !strings.Contains(fake.errors[0], "the server ended before the test did (signal: killed)") {
		t.Fatalf("errors %q", fake.errors)
	}
	if _, err := os.Stat(srv.LogFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("log file left behind: %v", err)
	}
}
