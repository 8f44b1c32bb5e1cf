package rookery_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// imapConn is the least IMAP a test needs to read a message back: tagged
// commands, untagged lines, and literals ({n}\r\n then n octets) inside
// them (RFC 3501 section 4.3).
type imapConn struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
	tag  int
}

func dialIMAP(t testing.TB, addr string) *imapConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	c := &imapConn{t: t, conn: conn, r: bufio.NewReader(conn)}
	greeting := c.line()
	if !strings.HasPrefix(greeting, "* OK") {
		t.Fatalf("greeting %q", greeting)
	}
	return c
}

func (c *imapConn) line() string {
	c.t.Helper()
	text, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("reading from the server: %v (after %q)", err, text)
	}
	if !strings.HasSuffix(text, "\r\n") {
		c.t.Fatalf("line without CRLF: %q", text)
	}
	return strings.TrimSuffix(text, "\r\n")
}

var (
	literalAtEnd = regexp.MustCompile(`\{(\d+)\}$`)
	bodyLiteral  = regexp.MustCompile(`^\* 1 FETCH \(.*BODY\[\] \{\d+\}`)
)

// response is one untagged response: its text with every literal's octets
// in Literals, in order.
type response struct {
	Text     string
	Literals [][]byte
}

// run sends one command and reads to its tagged completion, which must be OK.
func (c *imapConn) run(command string) []response {
	c.t.Helper()
	c.tag++
	tag := fmt.Sprintf("g%d", c.tag)
	if _, err := fmt.Fprintf(c.conn, "%s %s\r\n", tag, command); err != nil {
		c.t.Fatal(err)
	}
	var untagged []response
	for {
		text := c.line()
		if strings.HasPrefix(text, tag+" ") {
			if !strings.HasPrefix(text, tag+" OK") {
				c.t.Fatalf("%s: %s", command, text)
			}
			return untagged
		}
		resp := response{Text: text}
		for {
			m := literalAtEnd.FindStringSubmatch(text)
			if m == nil {
				break
			}
			n, err := strconv.Atoi(m[1])
			if err != nil || n > 64<<20 {
				c.t.Fatalf("literal size %q", m[1])
			}
			octets := make([]byte, n)
			if _, err := io.ReadFull(c.r, octets); err != nil {
				c.t.Fatalf("reading a %d-octet literal: %v", n, err)
			}
			resp.Literals = append(resp.Literals, octets)
			// The response goes on after the literal, up to the next CRLF.
			text = c.line()
			resp.Text += text
		}
		untagged = append(untagged, resp)
	}
}

// fetchBody logs in, selects mailbox and answers message 1's BODY[].
func fetchBody(t testing.TB, addr, user, password, mailbox string) []byte {
	t.Helper()
	c := dialIMAP(t, addr)
	c.run(fmt.Sprintf("LOGIN %s %s", quote(user), quote(password)))
	c.run("SELECT " + quote(mailbox))
	var body []byte
	for _, resp := range c.run("FETCH 1 BODY[]") {
		if bodyLiteral.MatchString(resp.Text) && len(resp.Literals) == 1 {
			body = resp.Literals[0]
		}
	}
	if body == nil {
		t.Fatal("FETCH 1 BODY[] answered no body")
	}
	bye := false
	for _, resp := range c.run("LOGOUT") {
		bye = bye || strings.HasPrefix(resp.Text, "* BYE")
	}
	if !bye {
		t.Error("LOGOUT without * BYE")
	}
	return body
}

// quote is an IMAP quoted string (RFC 3501 section 4.3).
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
