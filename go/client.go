package rookery

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Error is a REST call the server refused: the HTTP status and the error
// object's code and message (docs/rest.md), e.g. 404 NONEXISTENT, 400
// INVALID, 408 TIMEOUT from a wait that ended. Test with errors.As.
type Error struct {
	Method  string
	Path    string
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("rookery: %s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// Client calls the REST API of one server. Server embeds one; NewClient
// makes one for a server started some other way.
type Client struct {
	// BaseURL ends in /v1, like the ready line's rest.url.
	BaseURL string
	// Token is sent as a bearer token when not empty (--rest-token).
	Token string
	// HTTP does the requests; its Timeout bounds every call but WaitFor and
	// WaitUntil, which allow their own timeout plus a margin.
	HTTP *http.Client
}

// NewClient is a client of the REST API at baseURL (e.g. http://127.0.0.1:8025/v1).
func NewClient(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimSuffix(baseURL, "/"), Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Do makes one call: path is below /v1 (with its query), body is encoded as
// JSON (nil: none, or {} for a POST, which always needs a JSON body), and a
// 2xx answer is decoded into out when out is not nil.
func (c *Client) Do(method, path string, body, out any) error {
	return c.do(method, path, body, out, 0)
}

func (c *Client) do(method, path string, body, out any, timeout time.Duration) error {
	var payload io.Reader
	if body == nil && method == http.MethodPost {
		body = struct{}{}
	}
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("rookery: %s %s: %w", method, path, err)
		}
		payload = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.BaseURL+path, payload)
	if err != nil {
		return fmt.Errorf("rookery: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	httpClient := c.HTTP
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	if timeout > 0 {
		copied := *httpClient
		copied.Timeout = timeout
		httpClient = &copied
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("rookery: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	// Answers are small JSON documents; the cap keeps a wrong URL from
	// filling memory.
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("rookery: %s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		apiErr := &Error{Method: method, Path: path, Status: resp.StatusCode}
		var envelope struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &envelope) == nil && envelope.Error.Code != "" {
			apiErr.Code, apiErr.Message = envelope.Error.Code, envelope.Error.Message
		} else {
			apiErr.Message = strings.TrimSpace(string(data))
		}
		return apiErr
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("rookery: %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

func mailboxPath(name string) string {
	return "/mailboxes/" + url.PathEscape(name)
}

// AddMessage delivers raw (the whole message, CRLF lines) to a mailbox with
// the given flags. Raw that is not UTF-8 is sent as base64, so any octets
// arrive as given.
func (c *Client) AddMessage(mailbox, raw string, flags ...string) (Added, error) {
	body := map[string]any{"raw": raw}
	if !utf8.ValidString(raw) {
		body = map[string]any{"raw": base64.StdEncoding.EncodeToString([]byte(raw)), "encoding": "base64"}
	}
	if len(flags) > 0 {
		body["flags"] = flags
	}
	var added Added
	err := c.Do(http.MethodPost, mailboxPath(mailbox)+"/messages", body, &added)
	return added, err
}

// Messages lists a mailbox's messages.
func (c *Client) Messages(mailbox string) ([]Message, error) {
	var list []Message
	err := c.Do(http.MethodGet, mailboxPath(mailbox)+"/messages", nil, &list)
	return list, err
}

// Mailboxes lists the mailboxes.
func (c *Client) Mailboxes() ([]Mailbox, error) {
	var list []Mailbox
	err := c.Do(http.MethodGet, "/mailboxes", nil, &list)
	return list, err
}

// CreateMailbox creates a mailbox (a plain name: "Work/Projects").
func (c *Client) CreateMailbox(path string) (Mailbox, error) {
	var mb Mailbox
	err := c.Do(http.MethodPost, "/mailboxes", map[string]string{"path": path}, &mb)
	return mb, err
}

// SetFlags sets, adds or removes flags of messages by UID.
func (c *Client) SetFlags(mailbox string, uids []uint32, flags []string, mode FlagMode) ([]MessageFlags, error) {
	if flags == nil {
		flags = []string{}
	}
	body := map[string]any{"uids": uids, "flags": flags}
	if mode != "" {
		body["mode"] = mode
	}
	var list []MessageFlags
	err := c.Do(http.MethodPost, mailboxPath(mailbox)+"/messages/flags", body, &list)
	return list, err
}

// AddRule installs a script rule.
func (c *Client) AddRule(rule Rule) (RuleEntry, error) {
	var entry RuleEntry
	err := c.Do(http.MethodPost, "/script/rules", rule, &entry)
	return entry, err
}

// ClearRules removes every script rule.
func (c *Client) ClearRules() error {
	return c.Do(http.MethodDelete, "/script/rules", nil, nil)
}

// Reset puts mailboxes and users back to the options' (between tests on a
// shared server).
func (c *Client) Reset() error {
	return c.Do(http.MethodPost, "/reset", nil, nil)
}

// Sessions lists the IMAP sessions.
func (c *Client) Sessions() ([]Session, error) {
	var list []Session
	err := c.Do(http.MethodGet, "/sessions", nil, &list)
	return list, err
}

// Health is GET /v1/health.
func (c *Client) Health() (Health, error) {
	var h Health
	err := c.Do(http.MethodGet, "/health", nil, &h)
	return h, err
}

// Mark puts a mark event in the stream (a note, or a test's start or end)
// and answers its event id.
func (c *Client) Mark(text string, phase Phase, outcome Outcome) (int64, error) {
	body := map[string]string{"text": text}
	if phase != PhaseNone {
		body["phase"] = string(phase)
	}
	if outcome != NoOutcome {
		body["outcome"] = string(outcome)
	}
	var answer struct {
		ID int64 `json:"id"`
	}
	err := c.Do(http.MethodPost, "/events/mark", body, &answer)
	return answer.ID, err
}

// LatestEvent answers the newest event id: a Since for a later WaitFor.
func (c *Client) LatestEvent() (int64, error) {
	var answer struct {
		ID int64 `json:"id"`
	}
	err := c.Do(http.MethodGet, "/events/latest", nil, &answer)
	return answer.ID, err
}

// WaitOption narrows WaitFor and WaitUntil.
type WaitOption func(url.Values)

// Match adds a condition on the event's data: field is a dotted path
// (session.user, command), value is compared as text.
func Match(field, value string) WaitOption {
	return func(q url.Values) { q.Add("match", field+"="+value) }
}

// Since counts the backlog's events after event id too, so an event that
// came before the wait began is not missed.
func Since(id int64) WaitOption {
	return func(q url.Values) { q.Set("since", strconv.FormatInt(id, 10)) }
}

// Timeout is how long the server waits (default 5 s, at most 300 s); then
// the call fails with *Error 408 TIMEOUT.
func Timeout(d time.Duration) WaitOption {
	return func(q url.Values) { q.Set("timeout", strconv.FormatInt(d.Milliseconds(), 10)) }
}

// WaitFor long-polls for the first event of one of types (comma-separated,
// e.g. "command" or "delivery,append"; empty: any type) that the options
// match.
func (c *Client) WaitFor(types string, opts ...WaitOption) (Event, error) {
	q := url.Values{}
	if types != "" {
		q.Set("types", types)
	}
	return c.wait(q, opts)
}

// Condition is a state to wait for with WaitUntil.
type Condition struct{ query url.Values }

// MailboxHolds holds once the mailbox has at least messages messages.
func MailboxHolds(mailbox string, messages int) Condition {
	return Condition{url.Values{"mailbox": {mailbox}, "messages": {strconv.Itoa(messages)}}}
}

// SessionIdling holds once IMAP session number session is (idling true) or
// is not (false) in IDLE.
func SessionIdling(session int, idling bool) Condition {
	return Condition{url.Values{"session": {strconv.Itoa(session)}, "idling": {strconv.FormatBool(idling)}}}
}

// WaitUntil long-polls until the condition holds (only Timeout applies).
func (c *Client) WaitUntil(cond Condition, opts ...WaitOption) (Event, error) {
	q := url.Values{}
	for k, v := range cond.query {
		q[k] = append([]string(nil), v...)
	}
	return c.wait(q, opts)
}

func (c *Client) wait(q url.Values, opts []WaitOption) (Event, error) {
	q.Set("timeout", "5000")
	for _, opt := range opts {
		opt(q)
	}
	ms, _ := strconv.ParseInt(q.Get("timeout"), 10, 64)
	var ev Event
	err := c.do(http.MethodGet, "/events/wait?"+q.Encode(), nil, &ev, time.Duration(ms)*time.Millisecond+10*time.Second)
	return ev, err
}
