package rookery_test

import (
	"encoding/json"
	"errors"
	"net/smtp"
	"os"
	"strings"
	"testing"
	"time"

	"rookery.test/rookery"
)

func TestMain(m *testing.M) { os.Exit(rookery.Main(m)) }

func TestAddOverRESTThenFetchOverIMAP(t *testing.T) {
	srv := rookery.Start(t)
	raw := "From: a@example.com\r\nSubject: Hello from Go\r\n\r\nBody line\r\n"
	added, err := srv.AddMessage("INBOX", raw, `\Flagged`)
	if err != nil {
		t.Fatal(err)
	}
	if added.UID != 1 || added.UIDValidity == 0 {
		t.Fatalf("added %+v", added)
	}
	list, err := srv.Messages("INBOX")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].UID != 1 || list[0].Size != int64(len(raw)) || !contains(list[0].Flags, `\Flagged`) {
		t.Fatalf("messages %+v", list)
	}
	if got := fetchBody(t, srv.IMAPAddr(), "testuser", "testpass", "INBOX"); string(got) != raw {
		t.Fatalf("BODY[] %q, want %q", got, raw)
	}
}

func TestNonUTF8MessageArrivesAsGiven(t *testing.T) {
	srv := rookery.Start(t)
	raw := "Subject: latin-1\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\ncaf\xe9\r\n"
	if _, err := srv.AddMessage("INBOX", raw); err != nil {
		t.Fatal(err)
	}
	if got := fetchBody(t, srv.IMAPAddr(), "testuser", "testpass", "INBOX"); string(got) != raw {
		t.Fatalf("BODY[] %q, want %q", got, raw)
	}
}

func TestSendOverSMTP(t *testing.T) {
	srv := rookery.Start(t, rookery.WithSMTP())
	if srv.SMTPAddr() == "" {
		t.Fatal("no SMTP address with WithSMTP")
	}
	msg := "From: sender@example.com\r\nTo: testuser@example.com\r\nSubject: over SMTP\r\n\r\nsent with net/smtp\r\n"
	if err := smtp.SendMail(srv.SMTPAddr(), nil, "sender@example.com", []string{"testuser@example.com"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	ev, err := srv.WaitUntil(rookery.MailboxHolds("INBOX", 1), rookery.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != "state" {
		t.Fatalf("wait answered %+v", ev)
	}
	body := string(fetchBody(t, srv.IMAPAddr(), "testuser", "testpass", "INBOX"))
	if !strings.Contains(body, "Subject: over SMTP\r\n") || !strings.HasSuffix(body, "sent with net/smtp\r\n") {
		t.Fatalf("BODY[] %q", body)
	}
}

func TestRESTErrorsAreTyped(t *testing.T) {
	srv := rookery.Start(t)
	var apiErr *rookery.Error

	_, err := srv.Messages("Nope")
	if !errors.As(err, &apiErr) || apiErr.Status != 404 || apiErr.Code != "NONEXISTENT" || apiErr.Message == "" {
		t.Fatalf("messages of a missing mailbox: %#v", err)
	}
	if _, err := srv.CreateMailbox("Work"); err != nil {
		t.Fatal(err)
	}
	_, err = srv.CreateMailbox("Work")
	if !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Code != "ALREADYEXISTS" {
		t.Fatalf("second create: %#v", err)
	}
	_, err = srv.AddRule(rookery.Rule{On: "command", Command: "FECTH", Send: "$TAG NO nope\r\n"})
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "INVALID" || !strings.Contains(apiErr.Message, "FETCH") {
		t.Fatalf("rule for an unknown command: %#v", err)
	}
	_, err = srv.WaitFor("delivery", rookery.Timeout(50*time.Millisecond))
	if !errors.As(err, &apiErr) || apiErr.Status != 408 || apiErr.Code != "TIMEOUT" {
		t.Fatalf("wait that ends: %#v", err)
	}
	if !strings.Contains(err.Error(), "408 TIMEOUT") {
		t.Fatalf("message %q", err)
	}
}

func TestClientCalls(t *testing.T) {
	srv := rookery.Start(t, rookery.WithPlugins("IDLE"), rookery.WithUsers(map[string]string{"alice": "wonder land"}))
	health, err := srv.Health()
	if err != nil {
		t.Fatal(err)
	}
	if !health.OK || health.Version != srv.Version || health.IMAP.Port != srv.IMAP.Port || health.SMTP != nil {
		t.Fatalf("health %+v", health)
	}
	if _, err := srv.CreateMailbox("Work/Projects"); err != nil {
		t.Fatal(err)
	}
	boxes, err := srv.Mailboxes()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, mb := range boxes {
		paths = append(paths, mb.Path)
	}
	if !contains(paths, "INBOX") || !contains(paths, "Work/Projects") {
		t.Fatalf("mailboxes %v", paths)
	}
	if _, err := srv.AddMessage("Work/Projects", "Subject: plan\r\n\r\nQ3\r\n"); err != nil {
		t.Fatal(err)
	}
	flags, err := srv.SetFlags("Work/Projects", []uint32{1}, []string{`\Seen`, "$Label1"}, rookery.FlagsAdd)
	if err != nil {
		t.Fatal(err)
	}
	if len(flags) != 1 || !contains(flags[0].Flags, `\Seen`) || !contains(flags[0].Flags, "$Label1") {
		t.Fatalf("flags %+v", flags)
	}

	// A rule that refuses the next LOGIN once, then the user of WithUsers logs in.
	entry, err := srv.AddRule(rookery.Rule{On: "command", Command: "LOGIN", Times: 1, Send: "$TAG NO [UNAVAILABLE] Try again\r\n"})
	if err != nil || entry.ID == 0 {
		t.Fatalf("rule %+v %v", entry, err)
	}
	since, err := srv.LatestEvent()
	if err != nil {
		t.Fatal(err)
	}
	c := dialIMAP(t, srv.IMAPAddr())
	c.tag++
	if _, err := c.conn.Write([]byte("g1 LOGIN alice \"wonder land\"\r\n")); err != nil {
		t.Fatal(err)
	}
	if line := c.line(); line != "g1 NO [UNAVAILABLE] Try again" {
		t.Fatalf("scripted LOGIN answered %q", line)
	}
	if err := srv.ClearRules(); err != nil {
		t.Fatal(err)
	}
	c.run(`LOGIN alice "wonder land"`)
	ev, err := srv.WaitFor("command", rookery.Since(since), rookery.Match("command", "LOGIN"))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != "command" || ev.ID <= since {
		t.Fatalf("event %+v", ev)
	}
	sessions, err := srv.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 1 || sessions[0].User == nil || *sessions[0].User != "alice" || sessions[0].State != "Authenticated" {
		t.Fatalf("sessions %s", mustJSON(sessions))
	}
	c.run("SELECT INBOX")
	c.tag++
	if _, err := c.conn.Write([]byte("g9 IDLE\r\n")); err != nil {
		t.Fatal(err)
	}
	if line := c.line(); !strings.HasPrefix(line, "+") {
		t.Fatalf("IDLE answered %q", line)
	}
	if _, err := srv.WaitUntil(rookery.SessionIdling(sessions[0].Session, true)); err != nil {
		t.Fatal(err)
	}

	// Reset drops the mailbox made over REST and keeps the users of WithUsers.
	if err := srv.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Messages("Work/Projects"); err == nil {
		t.Fatal("Work/Projects survived Reset")
	}
	relogin := dialIMAP(t, srv.IMAPAddr())
	relogin.run(`LOGIN alice "wonder land"`)
	relogin.run("LOGOUT")
	id, err := srv.Mark("a note", rookery.PhaseNone, rookery.NoOutcome)
	if err != nil || id == 0 {
		t.Fatalf("mark %d %v", id, err)
	}
}

func TestStartMarksTheTest(t *testing.T) {
	srv := rookery.Start(t)
	ev, err := srv.WaitFor("mark", rookery.Since(0), rookery.Match("text", t.Name()), rookery.Match("phase", "start"))
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Text  string `json:"text"`
		Phase string `json:"phase"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.Text != t.Name() || data.Phase != "start" {
		t.Fatalf("mark %s (%v)", ev.Data, err)
	}
}

func contains(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// The npm package's command, run by node (WithCommand with arguments):
// test/go/go.test.ts sets ROOKERY_TEST_NODE and ROOKERY_TEST_CLI.
func TestWithCommandRunsTheNpmPackage(t *testing.T) {
	node, cli := os.Getenv("ROOKERY_TEST_NODE"), os.Getenv("ROOKERY_TEST_CLI")
	if node == "" || cli == "" {
		t.Skip("ROOKERY_TEST_NODE and ROOKERY_TEST_CLI not set")
	}
	srv := rookery.Start(t, rookery.WithCommand(node, cli), rookery.WithToken("s3cret"))
	if _, err := srv.AddMessage("INBOX", "Subject: via node\r\n\r\n.\r\n"); err != nil {
		t.Fatal(err)
	}
	var apiErr *rookery.Error
	if _, err := rookery.NewClient(srv.RESTURL(), "wrong").Health(); !errors.As(err, &apiErr) || apiErr.Status != 401 {
		t.Fatalf("a wrong token: %#v", err)
	}
	if got := fetchBody(t, srv.IMAPAddr(), "testuser", "testpass", "INBOX"); string(got) != "Subject: via node\r\n\r\n.\r\n" {
		t.Fatalf("BODY[] %q", got)
	}
}

func TestParallelTestsGetServersOfTheirOwn(t *testing.T) {
	for _, name := range []string{"one", "two", "three"} {
		name := name
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := rookery.Start(t)
			if _, err := srv.AddMessage("INBOX", "Subject: "+name+"\r\n\r\n.\r\n"); err != nil {
				t.Fatal(err)
			}
			list, err := srv.Messages("INBOX")
			if err != nil || len(list) != 1 {
				t.Fatalf("messages %+v %v", list, err)
			}
			ev, err := srv.WaitFor("mark", rookery.Since(0), rookery.Match("phase", "start"))
			if err != nil {
				t.Fatal(err)
			}
			var data struct{ Text string }
			if err := json.Unmarshal(ev.Data, &data); err != nil || data.Text != t.Name() {
				t.Fatalf("first mark %s, want %s", ev.Data, t.Name())
			}
		})
	}
}
