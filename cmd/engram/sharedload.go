package main

import (
	"context"
	"sync"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
)

// sharedLoad is the store as the router and the lexical index see it: the
// two caches of a tenant load on its first recall, one right after the
// other, each with a full read of the tenant's live memories (EachLive),
// and that read was half of a cold small tenant's first recall. Here the
// first load's memories are kept for a moment, and the second load takes
// them instead of reading the store again when the feed has no change
// after them — checked with one indexed read of the feed when it asks,
// so the memories are then exactly what a read of the store would have
// returned at that point, at the same feed sequence.
//
// Only tenants of at most shareMax live memories are kept (a big one
// loads from its snapshot files), each at most shareFor and handed over
// once, at most shareTotal memories in all.
type sharedLoad struct {
	*store.DB

	mu   sync.Mutex
	held map[string]*heldLoad
	n    int // memories held
}

type heldLoad struct {
	ms  []*engram.Memory
	seq int64
	at  time.Time
}

const (
	shareMax   = 2_000
	shareFor   = 2 * time.Second
	shareTotal = 20_000
)

func newSharedLoad(db *store.DB) *sharedLoad {
	return &sharedLoad{DB: db, held: map[string]*heldLoad{}}
}

// EachLive implements engram.ChangeFeed (see sharedLoad).
func (s *sharedLoad) EachLive(ctx context.Context, fn func(*engram.Memory) error) (int64, error) {
	tenant := engram.TenantFromContext(ctx)
	if h := s.take(tenant); h != nil {
		changes, err := s.DB.Changes(ctx, h.seq, 1)
		if err != nil {
			return 0, err
		}
		if len(changes) == 0 {
			for _, m := range h.ms {
				if err := fn(m); err != nil {
					return 0, err
				}
			}
			return h.seq, nil
		}
	}
	var ms []*engram.Memory
	over := false
	seq, err := s.DB.EachLive(ctx, func(m *engram.Memory) error {
		if over = over || len(ms) == shareMax; !over {
			ms = append(ms, m)
		}
		return fn(m)
	})
	if err == nil && !over && len(ms) > 0 {
		s.keep(tenant, &heldLoad{ms: ms, seq: seq, at: time.Now()})
	}
	return seq, err
}

// take removes and returns the tenant's fresh held load, if any.
func (s *sharedLoad) take(tenant string) *heldLoad {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[tenant]
	if h != nil {
		delete(s.held, tenant)
		s.n -= len(h.ms)
	}
	if h == nil || time.Since(h.at) > shareFor {
		return nil
	}
	return h
}

// keep holds h for the tenant's other cache, after dropping the stale
// loads (and the tenant's older one); when the fresh ones hold
// shareTotal memories, h is not kept.
func (s *sharedLoad) keep(tenant string, h *heldLoad) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, old := range s.held {
		if id == tenant || time.Since(old.at) > shareFor {
			delete(s.held, id)
			s.n -= len(old.ms)
		}
	}
	if s.n+len(h.ms) <= shareTotal {
		s.held[tenant] = h
		s.n += len(h.ms)
	}
}
