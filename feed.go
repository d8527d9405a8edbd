package engram

import (
	"context"
	"time"
)

// Change is one committed write of a memory, as the change feed delivers
// it: the memory before and after (nil before a create), in the tenant's
// commit order. A feedback credit comes as a Delta instead, with Before
// and After nil: it changes the learned fields only (and the learned
// queries, which Delta carries before and after when they change).
type Change struct {
	Seq      int64 // the tenant's feed sequence: 1, 2, 3, … with no gaps
	MemoryID string
	Version  int64
	Action   string // ActionCreate, ActionUpdate, …
	Before   *Memory
	After    *Memory
	Delta    *MemoryDelta
	Links    []*Link  // the links a link or unlink event made or removed
	Aliases  []*Alias // the aliases an alias or unalias event made or removed
	At       time.Time
}

// ChangeFeed is the store's change feed (DESIGN §2). Everything learned
// from writes that is not kept in the store itself (a routing model, a
// file mirror, a re-reflection queue) follows it from the last sequence it
// applied, so every engram server on one database sees the same state.
type ChangeFeed interface {
	// Changes returns the changes of the tenant in ctx after sequence
	// after, oldest first, at most limit of them.
	Changes(ctx context.Context, after int64, limit int) ([]*Change, error)
	// StateChanges is Changes for a follower of the memories' states
	// alone (the file mirror, the router): a feedback credit comes with
	// Before, After and Delta all nil, its delta neither read nor decoded.
	// Credits are most of a busy tenant's feed.
	StateChanges(ctx context.Context, after int64, limit int) ([]*Change, error)
	// EachLive calls fn with every live memory (valid, not archived) of the
	// tenant in ctx, read in one snapshot, and returns the feed sequence
	// that snapshot includes: a follower that loads from it and then
	// applies Changes after that sequence misses nothing and counts nothing
	// twice. The memories come oldest first and carry every field but
	// data and source.
	EachLive(ctx context.Context, fn func(*Memory) error) (int64, error)
}

// FeedCursors keep, in the store, how far each background consumer of the
// change feed (embeddings, the file mirror, re-reflection) has applied
// each tenant's changes, and lease a tenant to one server at a time, so
// that several engram servers on one database share the work and any of
// them can resume it. A lease is short (seconds) and renewed while its
// holder works, so a holder that dies frees its tenants soon; the servers'
// clocks are compared, so they must agree to well within a lease (NTP).
type FeedCursors interface {
	// ClaimFeed leases to holder, for lease, one tenant whose feed has
	// changes that consumer has not applied and that no other holder
	// leases now. It returns the tenant and the consumer's position in its
	// feed, or ok false when there is none.
	ClaimFeed(ctx context.Context, consumer, holder string, lease time.Duration) (tenantID string, after int64, ok bool, err error)
	// RenewFeed extends holder's lease on the tenant to lease from now; ok
	// is false when holder no longer holds it (it ran out and another
	// holder took it).
	RenewFeed(ctx context.Context, consumer, holder, tenantID string, lease time.Duration) (ok bool, err error)
	// AdvanceFeed records that consumer applied the tenant's changes up to
	// seq and ends holder's lease; a no-op if the lease was lost.
	AdvanceFeed(ctx context.Context, consumer, holder, tenantID string, seq int64) error
	// ReleaseFeed ends every lease holder has for consumer, without moving
	// a cursor: a process that stops says so, and another takes its
	// tenants at once instead of when the leases run out.
	ReleaseFeed(ctx context.Context, consumer, holder string) error
	// FeedLag returns how many changes of every tenant consumer has not
	// applied yet.
	FeedLag(ctx context.Context, consumer string) (int64, error)
}
