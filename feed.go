package engram

import (
	"context"
	"time"
)

// Change is one committed write of a memory, as the change feed delivers
// it: the memory before and after (nil before a create), in the tenant's
// commit order.
type Change struct {
	Seq      int64 // the tenant's feed sequence: 1, 2, 3, … with no gaps
	MemoryID string
	Version  int64
	Action   string // ActionCreate, ActionUpdate, …
	Before   *Memory
	After    *Memory
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
	// EachLive calls fn with every live memory (valid, not archived) of the
	// tenant in ctx, read in one snapshot, and returns the feed sequence
	// that snapshot includes: a follower that loads from it and then
	// applies Changes after that sequence misses nothing and counts nothing
	// twice. The memories carry their category, content and summary.
	EachLive(ctx context.Context, fn func(*Memory) error) (int64, error)
}
