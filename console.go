package engram

import (
	"context"
	"time"
)

// ConsoleSession is one signed-in console browser. It lives in the store,
// so that any server on the database accepts it and signing out ends it
// everywhere. ID is the SHA-256 of the cookie's token; the token itself
// is never stored.
type ConsoleSession struct {
	ID string
	// KeyID is the API key that signed in; the session ends when the key
	// is revoked.
	KeyID string
	// HomeTenantID is the key's tenant; TenantID the tenant the console
	// shows, which differs only when an admin switched.
	HomeTenantID string
	TenantID     string
	// CSRF is the token every form of the session must send back.
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// ConsoleSessionStore keeps console sessions.
type ConsoleSessionStore interface {
	// CreateConsoleSession stores s and drops expired sessions.
	CreateConsoleSession(ctx context.Context, s *ConsoleSession) error
	// FindConsoleSession returns the live session with id: EUNAUTHORIZED
	// when there is none, it expired at now, or its key was revoked.
	FindConsoleSession(ctx context.Context, id string, now time.Time) (*ConsoleSession, error)
	// SetConsoleTenant makes the session show another tenant. ENOTFOUND.
	SetConsoleTenant(ctx context.Context, id, tenantID string) error
	// DeleteConsoleSession ends a session; ending an unknown one is no error.
	DeleteConsoleSession(ctx context.Context, id string) error
}

// CategoryCount is the number of live memories in one category.
type CategoryCount struct {
	Category string
	Count    int64
}

// DayVotes counts the positive and negative feedback of one UTC day.
type DayVotes struct {
	Day  time.Time
	Up   int64
	Down int64
}

// TenantStats summarises a tenant's memory for the console's overview.
type TenantStats struct {
	Live          int64 // L2: valid, not archived
	Archived      int64
	Tombstoned    int64
	NeedsRevision int64 // live memories flagged for revision
	Reflections   int64 // L3: current reflections
	Categories    []CategoryCount
	// RewardBins counts live memories by reward in ten equal bins over
	// [-1, 1]: bin i holds rewards in [-1 + i/5, -1 + (i+1)/5), the last
	// bin includes 1.
	RewardBins [10]int64
	// Days holds the feedback per day since the time asked for, oldest
	// first, every day present (zero counts included).
	Days []DayVotes
}

// FeedbackRecord is one feedback as received, for the feedback stream.
type FeedbackRecord struct {
	Seq           int64
	ID            string
	InteractionID string
	RecallID      string // the recall judged, directly or through the interaction
	MemoryID      string
	Thumb         string
	Rating        int
	Signal        float64
	Reason        string
	Correction    string
	Rater         string
	CreatedAt     time.Time
	// Prompt, Response and Category are the judged interaction's (empty
	// for feedback on a recall or memory alone).
	Prompt   string
	Response string
	Category string
	// Result is what the feedback changed, as it was answered: credits,
	// pairs and the knowledge a correction became. Nil when unreadable.
	Result *FeedbackResult
}

// FeedbackFilter narrows the console's feedback stream. Zero fields do
// not filter.
type FeedbackFilter struct {
	// Before pages: only records with Seq below it.
	Before int64
	Limit  int
	// Signal is "up" (signal above 0), "down" (below 0) or "".
	Signal   string
	Rater    string
	Category string
	// Since and Until bound CreatedAt: [Since, Until).
	Since, Until time.Time
	// Query matches the reason, correction, prompt or answer (substring,
	// case-insensitive for ASCII).
	Query string
	// RecallID and MemoryID keep the feedback on one recall (directly or
	// through its interactions) or that credited one memory.
	RecallID string
	MemoryID string
}

// RecallRecord is a stored recall as the console shows it: the query,
// its route, what was injected (in order) and what exploration held back.
// A recall's left_out list is not stored (see docs/console-analyst.md).
type RecallRecord struct {
	ID          string
	Query       string
	Route       Route
	Items       []RecallItem
	HeldBack    *RecallItem
	TokenBudget int
	TokensUsed  int
	AgentID     string
	SessionID   string
	CreatedAt   time.Time
	// Interactions are the answers given with the recall's context.
	Interactions []*Interaction
}

// MemoryMovement is what feedback did to one memory within a window: the
// votes credited to it (applied ones; capped ones counted apart), the
// distinct raters, and the memory as it is now.
type MemoryMovement struct {
	Memory *Memory
	Up     int64
	Down   int64
	Capped int64
	Raters int64
	// Net is the sum of the applied signals; positive means promoted.
	Net float64
}

// ConsoleInsights are the read-only aggregates the console shows for the
// tenant in the context.
type ConsoleInsights interface {
	// TenantStats counts memories and the feedback per day since since.
	TenantStats(ctx context.Context, since time.Time) (*TenantStats, error)
	// FindFeedback returns up to f.Limit feedback records matching f,
	// newest first. EINVALID for a bad limit or signal.
	FindFeedback(ctx context.Context, f FeedbackFilter) ([]*FeedbackRecord, error)
	// FindRecallRecord returns a stored recall with its interactions.
	// ENOTFOUND.
	FindRecallRecord(ctx context.Context, id string) (*RecallRecord, error)
	// MemoryMovements returns the memories feedback moved since since:
	// promoted (net signal above zero, most first) and demoted (below
	// zero, most first), at most limit of each.
	MemoryMovements(ctx context.Context, since time.Time, limit int) (promoted, demoted []*MemoryMovement, err error)
	// FindReflectionsCiting returns the current reflections that cite the
	// memory.
	FindReflectionsCiting(ctx context.Context, memoryID string) ([]*Reflection, error)
}
