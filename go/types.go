package rookery

import "encoding/json"

// Address is a listener of the server, as the ready line reports it.
type Address struct {
	Host   string `json:"host"`
	Port   int    `json:"port"`
	Secure bool   `json:"secure"`
}

// Added is what AddMessage answers.
type Added struct {
	UID         uint32 `json:"uid"`
	UIDValidity uint32 `json:"uidvalidity"`
}

// Message is one message of a mailbox, as GET .../messages lists it.
type Message struct {
	UID          uint32   `json:"uid"`
	Flags        []string `json:"flags"`
	InternalDate string   `json:"internaldate"`
	Size         int64    `json:"size"`
	ModSeq       int64    `json:"modseq"`
}

// Mailbox is one mailbox, as GET /v1/mailboxes lists it.
type Mailbox struct {
	Path           string   `json:"path"`
	Delimiter      string   `json:"delimiter"`
	Flags          []string `json:"flags"`
	Selectable     bool     `json:"selectable"`
	Subscribed     bool     `json:"subscribed"`
	Messages       int      `json:"messages"`
	Unseen         int      `json:"unseen"`
	UIDNext        uint32   `json:"uidnext"`
	UIDValidity    uint32   `json:"uidvalidity"`
	PermanentFlags []string `json:"permanentFlags"`
	SpecialUse     []string `json:"specialUse"`
}

// FlagMode says how SetFlags combines the flags with a message's own.
type FlagMode string

const (
	FlagsSet    FlagMode = "set"
	FlagsAdd    FlagMode = "add"
	FlagsRemove FlagMode = "remove"
)

// MessageFlags is a message's flags after SetFlags.
type MessageFlags struct {
	UID   uint32   `json:"uid"`
	Flags []string `json:"flags"`
}

// Session is one IMAP session, as GET /v1/sessions lists it.
type Session struct {
	Session       int      `json:"session"`
	User          *string  `json:"user"`
	State         string   `json:"state"`
	Mailbox       *string  `json:"mailbox"`
	ReadOnly      bool     `json:"readOnly"`
	Enabled       []string `json:"enabled"`
	Secure        bool     `json:"secure"`
	Compressed    bool     `json:"compressed"`
	RemoteAddress *string  `json:"remoteAddress"`
}

// Event is one event of the server's stream (docs/events.md). Data is the
// event's fields as the stream sends them; decode it into a struct of the
// fields you need.
type Event struct {
	ID   int64           `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Rule is a script rule (docs/script-rules.md). The common fields are typed;
// More carries any other field of the ScriptRule schema (chunkDelay, close,
// mutate, ...) by its JSON name.
type Rule struct {
	On          string         `json:"on,omitempty"`
	Command     string         `json:"command,omitempty"`
	Tag         string         `json:"tag,omitempty"`
	Session     int            `json:"session,omitempty"`
	State       string         `json:"state,omitempty"`
	User        string         `json:"user,omitempty"`
	Mailbox     string         `json:"mailbox,omitempty"`
	Match       string         `json:"match,omitempty"`
	Nth         int            `json:"nth,omitempty"`
	Times       int            `json:"times,omitempty"`
	Send        string         `json:"send,omitempty"`
	Run         bool           `json:"run,omitempty"`
	Drop        bool           `json:"drop,omitempty"`
	Delay       int            `json:"delay,omitempty"`
	Description string         `json:"description,omitempty"`
	More        map[string]any `json:"-"`
}

// MarshalJSON merges More into the typed fields; a typed field wins.
func (r Rule) MarshalJSON() ([]byte, error) {
	type plain Rule
	typed, err := json.Marshal(plain(r))
	if err != nil || len(r.More) == 0 {
		return typed, err
	}
	merged := map[string]any{}
	for k, v := range r.More {
		merged[k] = v
	}
	var fields map[string]any
	if err := json.Unmarshal(typed, &fields); err != nil {
		return nil, err
	}
	for k, v := range fields {
		merged[k] = v
	}
	return json.Marshal(merged)
}

// RuleEntry is an installed rule with its id and how often it matched.
type RuleEntry struct {
	ID      int             `json:"id"`
	Rule    json.RawMessage `json:"rule"`
	Matched int             `json:"matched"`
	Hits    int             `json:"hits"`
}

// Health is the answer of GET /v1/health (the parts a test asks about).
type Health struct {
	OK      bool     `json:"ok"`
	Version string   `json:"version"`
	IMAP    Address  `json:"imap"`
	REST    Address  `json:"rest"`
	SMTP    *Address `json:"smtp"`
	Store   struct {
		Messages int   `json:"messages"`
		Bytes    int64 `json:"bytes"`
		Full     bool  `json:"full"`
	} `json:"store"`
}

// Phase and Outcome of a mark (POST /v1/events/mark); the empty value leaves
// the field out.
type (
	Phase   string
	Outcome string
)

const (
	PhaseNone  Phase   = ""
	PhaseStart Phase   = "start"
	PhaseEnd   Phase   = "end"
	NoOutcome  Outcome = ""
	Pass       Outcome = "pass"
	Fail       Outcome = "fail"
)
