package engram

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Event types of an L1 session (DESIGN §1). A message is a conversation
// turn and also becomes an L2 episode; the others record an agent run.
const (
	EventMessage     = "message"      // speaker or role, content, at?, message_id?
	EventTrigger     = "trigger"      // what started the run; fixed zone
	EventQuery       = "query"        // the question of the run; the current focus
	EventSubtask     = "subtask"      // a sub-task the run turned to; the current focus
	EventDecision    = "decision"     // a choice made; distilled when the session ends
	EventToolCall    = "tool_call"    // name, args, result
	EventLLMResponse = "llm_response" // a model's answer
	EventInstruction = "instruction"  // injected instructions; fixed zone
)

// EventTypes lists the event types in the order of the constants above.
var EventTypes = []string{EventMessage, EventTrigger, EventQuery, EventSubtask, EventDecision, EventToolCall,
	EventLLMResponse, EventInstruction}

// Session statuses.
const (
	SessionOpen   = "open"
	SessionClosed = "closed"
)

// Outcomes of an ended session.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// State scopes: a session's own document, or its resource's (shared by
// every session that names the resource).
const (
	ScopeSession  = "session"
	ScopeResource = "resource"
)

// MaxSessionIDLen bounds session, resource and agent ids.
const MaxSessionIDLen = 128

// ValidSessionID reports whether s is a usable session, resource or agent
// id: 1–128 of A–Z, a–z, 0–9, '.', '_', ':' and '-', and no "..", so that
// an id is safe in a path and a file name and never means "the parent".
func ValidSessionID(s string) bool {
	if len(s) == 0 || len(s) > MaxSessionIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
		if c == '.' && i > 0 && s[i-1] == '.' {
			return false
		}
	}
	return s != "."
}

// CheckID refuses, with EINVALID naming the field, a session, resource or
// agent id that ValidSessionID does not accept. Every door and service
// checks ids with it, so that an id refused on one route is refused on
// all of them (a recall's session_id is recorded, a persona's agent id
// names a key).
func CheckID(name, id string) error {
	if !ValidSessionID(id) {
		return Errorf(EINVALID, "%s must be 1-%d characters of A-Z a-z 0-9 . _ : - without \"..\"", name, MaxSessionIDLen)
	}
	return nil
}

// CheckOptionalID is CheckID for an optional id: "" is accepted.
func CheckOptionalID(name, id string) error {
	if id == "" {
		return nil
	}
	return CheckID(name, id)
}

// Session is an L1 thread or agent run of a tenant.
type Session struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id,omitempty"` // the end user of the session's first event
	ResourceID string     `json:"resource_id,omitempty"`
	Status     string     `json:"status"`
	Outcome    string     `json:"outcome,omitempty"`
	Note       string     `json:"note,omitempty"`
	Events     int64      `json:"events"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	ClosedAt   *time.Time `json:"closed_at,omitempty"`
}

// SessionEvent is one event of a session. Which fields apply depends on
// Type (see the Event constants); Seq and CreatedAt are the store's.
type SessionEvent struct {
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"`
	Speaker   string          `json:"speaker,omitempty"`
	Role      string          `json:"role,omitempty"`
	Content   string          `json:"content,omitempty"`
	At        *time.Time      `json:"at,omitempty"`
	MessageID string          `json:"message_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	// MemoryID is the L2 episode a message became (only in the answer to
	// the post that added it).
	MemoryID string `json:"memory_id,omitempty"`
}

// Who returns the speaker of a message, else its role, trimmed.
func (e *SessionEvent) Who() string {
	if s := strings.TrimSpace(e.Speaker); s != "" {
		return s
	}
	return strings.TrimSpace(e.Role)
}

// EventBatch is what one post to a session adds.
type EventBatch struct {
	// ResourceID names the user or document the session belongs to; it
	// is fixed by the session's first post.
	ResourceID string
	Events     []*SessionEvent
}

// EventsResult is the answer to an EventBatch.
type EventsResult struct {
	Session *Session        `json:"session"`
	Events  []*SessionEvent `json:"events"`
}

// EventPage asks for one page of a session's events, oldest first.
type EventPage struct {
	// Limit is the page size: 0 means limits.default_list_limit, and more
	// than limits.max_list_limit is EINVALID.
	Limit int
	// Cursor is "" for the first page, else a previous page's NextCursor.
	Cursor string
	// Newest asks for the session's last Limit events instead (still
	// oldest first, with no NextCursor), as the console shows them.
	Newest bool
}

// EventList is one page of a session's events.
type EventList struct {
	Session    *Session        `json:"session"`
	Events     []*SessionEvent `json:"events"`
	NextCursor string          `json:"next_cursor,omitempty"` // "" on the last page
}

// SessionContext is a session rendered as a prompt section.
type SessionContext struct {
	SessionID  string `json:"session_id"`
	Context    string `json:"context"`
	TokensUsed int    `json:"tokens_used"`
	TokenLimit int    `json:"token_limit"`
	// Rounds counts the rounds of the sliding zone: Whole kept as they
	// are, Compressed as one line each, Dropped for want of room.
	Rounds     SessionRounds `json:"rounds"`
	Omitted    []int64       `json:"omitted_fixed,omitempty"` // fixed-zone events that did not fit whole
	Summarizer string        `json:"summarizer"`              // "deterministic" or "chat:<model>"
	Fallback   string        `json:"fallback,omitempty"`      // why the chat summariser was not used
}

// SessionRounds counts the rounds of a rendered session.
type SessionRounds struct {
	Whole      int `json:"whole"`
	Compressed int `json:"compressed"`
	Dropped    int `json:"dropped"`
}

// WorkingState is a JSON working-memory document with its optional JSON
// Schema.
type WorkingState struct {
	Scope     string          `json:"scope"`
	ScopeID   string          `json:"scope_id"`
	State     json.RawMessage `json:"state"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	Version   int64           `json:"version"`
	UpdatedAt *time.Time      `json:"updated_at,omitempty"`
}

// SessionEnd is what ending a session did.
type SessionEnd struct {
	Session    *Session  `json:"session"`
	Strategies []*Memory `json:"strategies"`
	// Deduplicated counts strategies the write guard found already known.
	Deduplicated int `json:"deduplicated"`
}

// SessionService is L1 working memory for the tenant in the context.
// Every method answers ENOTFOUND for a session that does not exist, has
// expired, or belongs to another tenant, and EINVALID for a bad id.
type SessionService interface {
	// AppendEvents adds events to the session, creating it on its first
	// post. ECONFLICT when it is closed or names another resource;
	// ETOOLARGE past sessions.max_events; EQUOTA past a tenant quota
	// (sessions, or memories and bytes for the messages' episodes).
	AppendEvents(ctx context.Context, sessionID string, b EventBatch) (*EventsResult, error)
	// Events returns the session and one page of its events; a reader
	// never holds more than a page of a long session. EINVALID for a bad
	// limit or cursor.
	Events(ctx context.Context, sessionID string, page EventPage) (*EventList, error)
	// Context renders the session within tokenLimit tokens.
	Context(ctx context.Context, sessionID string, tokenLimit int) (*SessionContext, error)
	// State returns the session's (or its resource's) document.
	State(ctx context.Context, sessionID, scope string) (*WorkingState, error)
	// PutState sets the document and, when schema is not nil, its schema.
	// A session's own document (scope session) may be its first write: it
	// creates the session. EUNPROCESSABLE when the document fails the
	// schema.
	PutState(ctx context.Context, sessionID, scope string, state, schema json.RawMessage) (*WorkingState, error)
	// PatchState applies a JSON Merge Patch (RFC 7396) to the document,
	// creating the session as PutState does.
	PatchState(ctx context.Context, sessionID, scope string, patch json.RawMessage) (*WorkingState, error)
	// End distils the session into L2 strategies and closes it.
	// ECONFLICT when it is already closed.
	End(ctx context.Context, sessionID, outcome, note string) (*SessionEnd, error)
}

// SessionsConfig configures L1 working memory.
type SessionsConfig struct {
	// TTL is how long a session lives after its last event; an expired
	// session reads as absent and the cleaner deletes it.
	TTL time.Duration `yaml:"ttl"`
	// CleanupInterval is how often engram serve deletes expired sessions.
	CleanupInterval time.Duration `yaml:"cleanup_interval"`
	// RememberMessages makes every message event an L2 episode at once.
	RememberMessages bool `yaml:"remember_messages"`
	// WholeRounds is how many of the newest rounds the context keeps whole.
	WholeRounds int `yaml:"whole_rounds"`
	// MaxPersonaBytes bounds an agent's persona (agent.md).
	MaxPersonaBytes int `yaml:"max_persona_bytes"`
	// MaxEvents caps the events of one session: a post past it is
	// refused (413) and writes nothing. It also bounds what rendering a
	// session's context or ending it reads.
	MaxEvents int64 `yaml:"max_events"`
	// ChatBaseURL, when set, names an OpenAI-compatible chat endpoint that
	// summarises older rounds; any failure falls back to the
	// deterministic one-line compression.
	ChatBaseURL string        `yaml:"chat_base_url"`
	ChatModel   string        `yaml:"chat_model"`
	ChatAPIKey  string        `yaml:"chat_api_key" secret:"true"`
	ChatTimeout time.Duration `yaml:"chat_timeout"`
}

// DefaultSessionsConfig returns a 24-hour TTL cleaned every 10 minutes,
// messages remembered, the last 3 rounds whole, personas up to 16 KiB,
// 10,000 events a session and no chat summariser.
func DefaultSessionsConfig() SessionsConfig {
	return SessionsConfig{TTL: 24 * time.Hour, CleanupInterval: 10 * time.Minute, RememberMessages: true, WholeRounds: 3,
		MaxPersonaBytes: 16 << 10, MaxEvents: 10000, ChatModel: "gpt-4o-mini", ChatTimeout: 10 * time.Second}
}
