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
	RecallID      string
	MemoryID      string
	Thumb         string
	Rating        int
	Signal        float64
	Reason        string
	Correction    string
	Rater         string
	CreatedAt     time.Time
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
	// FindFeedback returns up to limit feedback records, newest first,
	// with Seq below before (0: from the newest).
	FindFeedback(ctx context.Context, before int64, limit int) ([]*FeedbackRecord, error)
	// MemoryMovements returns the memories feedback moved since since:
	// promoted (net signal above zero, most first) and demoted (below
	// zero, most first), at most limit of each.
	MemoryMovements(ctx context.Context, since time.Time, limit int) (promoted, demoted []*MemoryMovement, err error)
	// FindReflectionsCiting returns the current reflections that cite the
	// memory.
	FindReflectionsCiting(ctx context.Context, memoryID string) ([]*Reflection, error)
}
