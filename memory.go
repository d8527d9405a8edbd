package engram

import (
	"context"
	"encoding/json"
	"time"
)

// Priority orders L2 memories and sets how fast they decay: P0 identity
// memories never decay, P3 ones fade in days.
type Priority string

// The four priorities, most important first.
const (
	P0 Priority = "P0"
	P1 Priority = "P1"
	P2 Priority = "P2"
	P3 Priority = "P3"
)

// Valid reports whether p is one of P0–P3.
func (p Priority) Valid() bool {
	switch p {
	case P0, P1, P2, P3:
		return true
	}
	return false
}

// Security levels of a memory, lowest first. A read through an API key
// shows a memory above the key's clearance left out or masked (see
// Cleared, Reader and docs/admin.md).
const (
	SecurityPublic       = "public"
	SecurityInternal     = "internal"
	SecurityConfidential = "confidential"
	SecuritySecret       = "secret"
)

// ValidSecurityLevel reports whether s names a security level.
func ValidSecurityLevel(s string) bool {
	switch s {
	case SecurityPublic, SecurityInternal, SecurityConfidential, SecuritySecret:
		return true
	}
	return false
}

// Memory is one L2 (long-term, semantic) memory: a JSON record with a
// category, tags, confidence and a reward learned from feedback.
type Memory struct {
	ID      string `json:"id"`
	AgentID string `json:"agent_id,omitempty"`
	// UserID is the end user of the tenant the memory belongs to; "" is
	// shared with every user of the tenant (see user.go).
	UserID      string          `json:"user_id,omitempty"`
	Key         string          `json:"key,omitempty"`
	Category    string          `json:"category"`
	Subcategory string          `json:"subcategory,omitempty"`
	Type        string          `json:"type,omitempty"`
	Tags        []string        `json:"tags"`
	Content     string          `json:"content"`
	Data        json.RawMessage `json:"data,omitempty"`
	Summary     string          `json:"summary,omitempty"`
	// Context is where the memory came from, e.g. the message a reply
	// answers. It is searched (at half weight) but never injected, so a
	// memory can be found by the words of the question it settled.
	Context string `json:"context,omitempty"`
	// Learned holds the queries whose answers this memory served and
	// users approved (positive feedback), newest last. Like Context it is
	// searched at low weight and never injected, so a memory that helped
	// answer a question is found again for similar ones.
	Learned       string   `json:"learned,omitempty"`
	Importance    float64  `json:"importance"`
	Priority      Priority `json:"priority"`
	Confidence    float64  `json:"confidence"`
	Reward        float64  `json:"reward"`
	UpCount       int64    `json:"up_count"`
	DownCount     int64    `json:"down_count"`
	NeedsRevision bool     `json:"needs_revision"`
	// SupersededBy is the memory a user's correction of an answer this
	// memory rested on became (see FeedbackResult.Knowledge); such a memory
	// also needs revision.
	SupersededBy  string          `json:"superseded_by,omitempty"`
	Source        json.RawMessage `json:"source,omitempty"`
	SecurityLevel string          `json:"security_level"`

	// Stability is the Ebbinghaus stability S in days; 0 for P0 (no decay).
	Stability float64 `json:"stability"`
	// TokenCount and SummaryTokenCount are counted once at write time.
	TokenCount        int    `json:"token_count"`
	SummaryTokenCount int    `json:"summary_token_count"`
	ContentHash       string `json:"content_hash"`

	Valid          bool       `json:"valid"`
	Archived       bool       `json:"archived"`
	ExpiresAt      *time.Time `json:"expires_at,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	LastAccessedAt *time.Time `json:"last_accessed_at,omitempty"`
	AccessCount    int64      `json:"access_count"`
	// ReinforcedAt starts the decay clock: when the memory was created,
	// its content or summary edited by a person or an agent, or an answer
	// it served approved by positive feedback. Being read, voted down or
	// re-labelled never moves it, so a memory recalled every day still
	// fades unless someone affirms it.
	ReinforcedAt time.Time `json:"reinforced_at"`
	// OccurredAt is when what the memory records happened, e.g. the time
	// of the conversation message an episode holds; recall shows it as
	// [2006-01-02] before the text so that a model can answer "when".
	OccurredAt *time.Time `json:"occurred_at,omitempty"`
	// Emotion is the memory's emotional intensity in [0, 1]: given on the
	// write, else estimated from its text (EstimateEmotion) when it is
	// stored. It slows the memory's decay (EmotionStability) and orders
	// equally relevant memories (see emotion.go). Nil only before storing.
	Emotion *float64 `json:"emotion,omitempty"`
	// Quarantined marks a memory the write gate held back
	// (memory.gate_mode: quarantine): stored archived, never recalled,
	// until it is released.
	Quarantined bool  `json:"quarantined,omitempty"`
	Version     int64 `json:"version"`
}

// Expired reports whether m has an expiry at or before now.
func (m *Memory) Expired(now time.Time) bool {
	return m.ExpiresAt != nil && !m.ExpiresAt.After(now)
}

// MemoryFilter selects memories of the caller's tenant. Pointer fields that
// are nil are not applied. Tombstoned memories are left out unless
// IncludeInvalid is set; archived ones unless IncludeArchived is.
type MemoryFilter struct {
	Category      *string
	Tag           *string
	Query         *string // lexical match over content, summary, tags and key
	NeedsRevision *bool
	// Quarantined selects the memories the write gate held back (true,
	// archived or not) or the others (false).
	Quarantined *bool
	KeyPrefix   *string
	AgentID     *string
	UserID      *string // exactly this user's memories; "" the shared ones

	IncludeInvalid  bool
	IncludeArchived bool

	Limit  int    // page size; the service caps it
	Cursor string // opaque, from a previous page's NextCursor
}

// MemoryPage is one page of FindMemories.
type MemoryPage struct {
	Items      []*Memory
	NextCursor string // "" on the last page
}

// MemoryUpdate changes the fields that are not nil. ExpectVersion, when
// set, makes the update fail with ECONFLICT unless the stored version
// matches (optimistic concurrency, HTTP If-Match).
type MemoryUpdate struct {
	AgentID       *string
	Category      *string
	Subcategory   *string
	Type          *string
	Tags          *[]string
	Content       *string
	Data          *json.RawMessage
	Summary       *string
	Context       *string
	Importance    *float64
	Priority      *Priority
	Confidence    *float64
	Emotion       *float64
	NeedsRevision *bool
	Source        *json.RawMessage
	SecurityLevel *string
	Archived      *bool
	ExpiresAt     *time.Time
	ClearExpiry   bool
	// Release lets a quarantined memory into recall (ECONFLICT when it is
	// not quarantined).
	Release bool

	ExpectVersion *int64
}

// Memory event actions.
const (
	ActionCreate    = "create"
	ActionUpdate    = "update"
	ActionTombstone = "tombstone"
	ActionRollback  = "rollback"
	ActionFeedback  = "feedback" // credit from a thumb or rating
)

// MemoryEvent is one append-only entry in a memory's history: every
// create, update, tombstone and rollback with the full state before and
// after it.
type MemoryEvent struct {
	ID       int64   `json:"id"`
	MemoryID string  `json:"memory_id"`
	Version  int64   `json:"version"`
	Action   string  `json:"action"`
	Before   *Memory `json:"before,omitempty"`
	After    *Memory `json:"after,omitempty"`
	// Links are the links a "link" event made or an "unlink" event
	// removed (see Link).
	Links []*Link `json:"links,omitempty"`
	// Aliases are the aliases an "alias" event made or an "unalias"
	// event removed (see Alias).
	Aliases   []*Alias  `json:"aliases,omitempty"`
	Actor     Actor     `json:"actor"`
	CreatedAt time.Time `json:"created_at"`
}

// MemoryDelta is what one feedback credit changed of a memory: the new
// values of its learned fields, and its learned queries before and after
// when they changed. The store records a credit as a delta instead of the
// full memory before and after (most of it text the credit leaves alone),
// and rebuilds the full states for the history from the nearest full
// event before it.
type MemoryDelta struct {
	FeedbackID    string         `json:"feedback_id"`
	Reward        float64        `json:"reward"`
	Confidence    float64        `json:"confidence"`
	UpCount       int64          `json:"up_count"`
	DownCount     int64          `json:"down_count"`
	Stability     float64        `json:"stability"`
	NeedsRevision bool           `json:"needs_revision"`
	ReinforcedAt  *time.Time     `json:"reinforced_at,omitempty"` // set when the credit restarted the decay clock
	Learned       *LearnedChange `json:"learned,omitempty"`
	// UpdatedAt is the time of the credit, which the event records
	// beside the delta.
	UpdatedAt time.Time `json:"-"`
}

// LearnedChange is a change of Memory.Learned: the queries before and
// after (a follower of the change feed re-indexes the difference).
type LearnedChange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// DeltaOf returns what changed from before to after, which may differ in
// the fields a MemoryDelta holds and their version only.
func DeltaOf(feedbackID string, before, after *Memory) *MemoryDelta {
	d := &MemoryDelta{FeedbackID: feedbackID, Reward: after.Reward, Confidence: after.Confidence,
		UpCount: after.UpCount, DownCount: after.DownCount, Stability: after.Stability,
		NeedsRevision: after.NeedsRevision, UpdatedAt: after.UpdatedAt}
	if !before.ReinforcedAt.Equal(after.ReinforcedAt) {
		at := after.ReinforcedAt
		d.ReinforcedAt = &at
	}
	if before.Learned != after.Learned {
		d.Learned = &LearnedChange{From: before.Learned, To: after.Learned}
	}
	return d
}

// Apply gives m the values of d, as version.
func (d *MemoryDelta) Apply(m *Memory, version int64) {
	m.Reward, m.Confidence, m.UpCount, m.DownCount = d.Reward, d.Confidence, d.UpCount, d.DownCount
	m.Stability, m.NeedsRevision, m.UpdatedAt = d.Stability, d.NeedsRevision, d.UpdatedAt
	if d.ReinforcedAt != nil {
		m.ReinforcedAt = *d.ReinforcedAt
	}
	if d.Learned != nil {
		m.Learned = d.Learned.To
	}
	m.Version = version
}

// Fold makes d, the next delta of the same memory after earlier, stand
// for both when the sleep cycle removes earlier: d's values are already
// the newer ones, and when only earlier restarted the decay clock or
// changed the learned queries d records them, unchanged by d itself, so
// that the state rebuilt from d still holds them. d's From stays its own:
// a follower of the change feed that applied every event before d
// expects it.
func (d *MemoryDelta) Fold(earlier *MemoryDelta) {
	if d.ReinforcedAt == nil {
		d.ReinforcedAt = earlier.ReinforcedAt
	}
	if d.Learned == nil && earlier.Learned != nil {
		d.Learned = &LearnedChange{From: earlier.Learned.To, To: earlier.Learned.To}
	}
}

// KeyWrite is one set_memory(key, json_content, source) call.
type KeyWrite struct {
	Key     string          // normalized with NormalizeKey
	Content json.RawMessage // JSON; "null" tombstones the key
	Source  json.RawMessage // required; see CheckProvenance

	// Optional metadata; when unset it is read from the content object's
	// fields of the same name, then defaulted.
	AgentID       *string
	Category      *string
	Tags          *[]string
	Type          *string
	Summary       *string
	Importance    *float64
	Priority      *Priority
	Emotion       *float64 // unset: estimated from the text
	ExpiresAt     *time.Time
	ExpectVersion *int64
}

// CreateResult says what CreateMemory did.
type CreateResult struct {
	Memory *Memory
	// Deduplicated is true when identical content already existed in the
	// same tenant and category and that memory was returned instead.
	Deduplicated bool
}

// CheckBatchKeys refuses a batch whose items name one key twice; keys[i]
// is item i's key, "" for none. Two writes to one key in one batch can
// never both succeed, so the batch is refused whole, before the store,
// with EINVALID naming the key and both items, rather than left to fail
// as a conflict that no retry can mend. Every door that writes a batch
// (REST's /v1/memories/batch, MCP's JSON-RPC batches) checks with it.
func CheckBatchKeys(keys []string) error {
	first := make(map[string]int, len(keys))
	for i, k := range keys {
		if k == "" {
			continue
		}
		if j, ok := first[k]; ok {
			return Errorf(EINVALID, "batch items %d and %d both name key %q; a batch may name a key once", j, i, k)
		}
		first[k] = i
	}
	return nil
}

// MemoryService manages L2 memories of the tenant in the context.
type MemoryService interface {
	// FindMemoryByID returns ENOTFOUND if the tenant has no such memory.
	// Tombstoned memories are returned (Valid=false).
	FindMemoryByID(ctx context.Context, id string) (*Memory, error)
	// FindMemories returns one page; EINVALID for a bad filter or cursor.
	FindMemories(ctx context.Context, f MemoryFilter) (*MemoryPage, error)
	// CreateMemory stores m, or returns the existing memory with the same
	// content in the same category. EINVALID, ECONFLICT (key taken).
	CreateMemory(ctx context.Context, m *Memory) (*CreateResult, error)
	// CreateMemories stores a batch whole or not at all, with the same
	// rules as CreateMemory; results are in the order of ms.
	CreateMemories(ctx context.Context, ms []*Memory) ([]*CreateResult, error)
	// UpdateMemory applies upd. ENOTFOUND, EINVALID, ECONFLICT.
	UpdateMemory(ctx context.Context, id string, upd MemoryUpdate) (*Memory, error)
	// DeleteMemory tombstones the memory (Valid=false); its history stays.
	// ENOTFOUND, ECONFLICT when expectVersion is stale.
	DeleteMemory(ctx context.Context, id string, expectVersion *int64) (*Memory, error)
	// FindMemoryEvents returns a memory's history, oldest first. ENOTFOUND.
	FindMemoryEvents(ctx context.Context, id string) ([]*MemoryEvent, error)
	// FindMemoryEventsPage returns up to limit events of a memory's
	// history with versions above after, oldest first. ENOTFOUND.
	FindMemoryEventsPage(ctx context.Context, id string, after int64, limit int) ([]*MemoryEvent, error)
	// RollbackMemory restores the state recorded after version as a new
	// version. ENOTFOUND, EINVALID (no such version), ECONFLICT.
	RollbackMemory(ctx context.Context, id string, version int64, expectVersion *int64) (*Memory, error)
	// SetKey is set_memory: last write wins, "null" tombstones.
	// EINVALID for a bad key, content or source.
	SetKey(ctx context.Context, w KeyWrite) (*Memory, error)
	// FindMemoryByKey returns the memory at a normalized key, or ENOTFOUND
	// when there is none, or it is tombstoned or expired.
	FindMemoryByKey(ctx context.Context, key string) (*Memory, error)
	// CountMemories returns the number of memories of all tenants by state
	// ("active", "tombstoned", "archived"), for metrics.
	CountMemories(ctx context.Context) (map[string]int64, error)
}

// Reinforces reports whether a change from before to after restarts the
// memory's decay clock (ReinforcedAt): an update or rollback that changes
// what the memory says, its content or summary. Positive feedback
// reinforces too, through the learning policy; being read, voted down or
// re-labelled never does.
func Reinforces(action string, before, after *Memory) bool {
	switch action {
	case ActionUpdate, ActionRollback:
		return before.Content != after.Content || before.Summary != after.Summary
	}
	return false
}
