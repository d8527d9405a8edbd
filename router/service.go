package router

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram"
)

// feedPage is how many changes one read of the feed returns.
const feedPage = 1000

// Service implements engram.RouterService on a Router, learning each
// tenant's model from the store's change feed (DESIGN §2): the first query
// of a tenant loads its live memories from one snapshot with the feed
// sequence it includes, and every query first applies the changes
// committed since. A write made through any engram server on the same
// database is therefore reflected in the next route on every server — the
// lag is zero, at the cost of one indexed read of the feed per query
// (shared by queries of one tenant that arrive while it runs).
//
// The models are a cache of the store: at most maxTenants are kept, the
// least recently used evicted and rebuilt from the store when needed.
type Service struct {
	router     *Router
	feed       engram.ChangeFeed
	maxTenants int
	now        func() time.Time
	dir        string // snapshot files (snapshot.go); "" keeps none
	log        *slog.Logger
	files      sync.Mutex     // writes and removals of snapshot files
	bg         sync.WaitGroup // snapshot writers

	mu      sync.Mutex
	tenants map[string]*tenantState
	lru     *list.List // of tenant ids, most recently used first
}

// tenantState is one tenant's place in the feed. mu serialises its load,
// catch-up and routing; evicted is set, under mu, when the model is
// dropped, so a caller that waited on mu starts over.
type tenantState struct {
	mu       sync.Mutex
	loaded   bool
	evicted  bool
	seq      int64     // last feed sequence applied
	syncedAt time.Time // when the last read of the feed started
	elem     *list.Element
	live     int   // live memories the model learned from (kb and unlabelled ones too)
	snapSeq  int64 // feed sequence of the snapshot file read or last written; -1: the model has none

	// Under Service.files: the newest snapshot written, and whether the
	// tenant was forgotten (no file may be written for this state then).
	fileSeq   int64
	forgotten bool
}

var _ engram.RouterService = (*Service)(nil)

// NewService returns a Service routing with r and learning from feed. A
// nil feed routes on the built-in rules alone. maxTenants bounds the
// models kept in memory (router.max_tenants); below 1, there is no bound.
func NewService(r *Router, feed engram.ChangeFeed, maxTenants int) *Service {
	if maxTenants < 1 {
		maxTenants = math.MaxInt
	}
	return &Service{router: r, feed: feed, maxTenants: maxTenants, now: time.Now,
		log: slog.New(slog.DiscardHandler), tenants: map[string]*tenantState{}, lru: list.New()}
}

// WithSnapshots keeps the models of big tenants in snapshot files under
// dir (see snapshot.go), so that their first route on a fresh server
// reads a file instead of every memory; log reports files that could not
// be written or read (nil discards). It returns s.
func (s *Service) WithSnapshots(dir string, log *slog.Logger) *Service {
	s.dir = dir
	if log != nil {
		s.log = log
	}
	return s
}

// RouteQuery routes query for the tenant in ctx. A query longer than
// MaxQueryRunes (2000) runes is routed on its first MaxQueryRunes runes.
// It returns EINVALID for an empty or blank query, and the feed's error,
// wrapped, when the tenant's model cannot be brought up to date (the next
// query tries again).
func (s *Service) RouteQuery(ctx context.Context, query string) (*engram.Route, error) {
	if strings.TrimSpace(query) == "" {
		return nil, engram.Errorf(engram.EINVALID, "query is empty")
	}
	tenant := engram.TenantFromContext(ctx)
	if s.feed == nil {
		route := s.router.Route(tenant, query)
		return &route, nil
	}
	arrived := s.now()
	for {
		st := s.state(tenant)
		st.mu.Lock()
		if st.evicted {
			st.mu.Unlock()
			continue
		}
		err := s.sync(ctx, tenant, st, arrived)
		var route engram.Route
		if err == nil {
			route = s.router.Route(tenant, query)
		}
		st.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return &route, nil
	}
}

// state returns the tenant's state, marked most recently used, evicting
// the least recently used tenants beyond the bound (those not in use).
func (s *Service) state(tenant string) *tenantState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.tenants[tenant]
	if st == nil {
		st = &tenantState{fileSeq: -1}
		st.elem = s.lru.PushFront(tenant)
		s.tenants[tenant] = st
	} else {
		s.lru.MoveToFront(st.elem)
	}
	for e := s.lru.Back(); e != nil && len(s.tenants) > s.maxTenants; {
		prev := e.Prev()
		id := e.Value.(string)
		if victim := s.tenants[id]; id != tenant && victim.mu.TryLock() {
			victim.evicted = true
			s.router.Drop(id)
			s.lru.Remove(e)
			delete(s.tenants, id)
			victim.mu.Unlock()
		}
		e = prev
	}
	return st
}

// sync brings the tenant's model up to date under st.mu: a load the first
// time (from its snapshot file if there is a usable one, else from one
// snapshot read of the store), then the feed's changes since. A read of
// the feed that started after the caller arrived already holds every
// change committed before it arrived, so the caller need not read again.
// The feed's sequence has no gaps; a gap (events folded by the sleep
// cycle after a snapshot file was written, or an end user forgotten)
// makes the tenant load from the store.
func (s *Service) sync(ctx context.Context, tenant string, st *tenantState, arrived time.Time) error {
	if !st.loaded {
		if m, seq, live, ok := s.readSnapshot(tenant); ok {
			s.router.setModel(tenant, m)
			st.loaded, st.seq, st.snapSeq, st.live = true, seq, seq, live
		} else if err := s.load(ctx, tenant, st); err != nil {
			return err
		}
	}
	if st.syncedAt.After(arrived) {
		s.snapshot(tenant, st)
		return nil
	}
	start := s.now()
	reloaded := false
	for {
		changes, err := s.feed.StateChanges(ctx, st.seq, feedPage)
		if err != nil {
			return fmt.Errorf("router: read changes: %w", err)
		}
		gap := false
		for _, c := range changes {
			if c.Seq != st.seq+1 && !reloaded {
				gap = true
				break
			}
			s.apply(tenant, st, c)
			st.seq = c.Seq
		}
		if gap {
			// Load once from the store; its head is recent, and events
			// are folded only once they are old.
			_ = s.removeFile(tenant, nil) // a file left behind is rewritten after the load
			if err := s.load(ctx, tenant, st); err != nil {
				return err
			}
			reloaded = true
			continue
		}
		if len(changes) < feedPage {
			st.syncedAt = start
			s.snapshot(tenant, st)
			return nil
		}
	}
}

// load fills the tenant's model from one snapshot read of the store.
func (s *Service) load(ctx context.Context, tenant string, st *tenantState) error {
	start := s.now()
	s.router.Drop(tenant)
	live := 0
	seq, err := s.feed.EachLive(ctx, func(m *engram.Memory) error {
		live++
		s.router.Observe(tenant, m.Category, labelText(m))
		return nil
	})
	if err != nil {
		s.router.Drop(tenant)
		st.loaded = false
		return fmt.Errorf("router: load tenant: %w", err)
	}
	st.loaded, st.seq, st.syncedAt, st.live, st.snapSeq = true, seq, start, live, -1
	return nil
}

// snapshot writes the tenant's snapshot file in the background when the
// tenant is big enough to keep one and it has none of this model (loaded
// from the store) or one many changes old. The bytes are taken under
// st.mu, so they hold exactly the changes up to st.seq.
func (s *Service) snapshot(tenant string, st *tenantState) {
	if s.snapPath(tenant) == "" || st.live < snapshotMinLive {
		return
	}
	if st.snapSeq >= 0 && st.seq-st.snapSeq < max(snapshotMinChanges, int64(st.live/4)) {
		return
	}
	b, seq := s.router.encodeTenant(tenant, st.seq, st.live), st.seq
	st.snapSeq = seq
	s.bg.Go(func() {
		if err := s.writeFile(tenant, st, seq, b); err != nil {
			s.log.Warn("router snapshot not written; the tenant loads from the store", "tenant", tenant, "err", err)
		}
	})
}

// Close waits for the snapshot files being written.
func (s *Service) Close() { s.bg.Wait() }

// Forget drops the model of the tenant in ctx and deletes its snapshot
// file, after the store erased some of its memories (an end user
// forgotten): neither the model nor the file keeps their words, and the
// next route loads the tenant from the store.
func (s *Service) Forget(ctx context.Context) error {
	tenant := engram.TenantFromContext(ctx)
	var old *tenantState
	for {
		s.mu.Lock()
		st := s.tenants[tenant]
		s.mu.Unlock()
		if st == nil {
			break
		}
		st.mu.Lock()
		if st.evicted {
			st.mu.Unlock()
			continue
		}
		s.mu.Lock()
		st.evicted = true
		s.router.Drop(tenant)
		s.lru.Remove(st.elem)
		delete(s.tenants, tenant)
		s.mu.Unlock()
		st.mu.Unlock()
		old = st
		break
	}
	return s.removeFile(tenant, old)
}

// apply learns one change: the memory's old label is forgotten and its new
// one observed, each when live, so a model kept current by changes equals
// one loaded afresh.
func (s *Service) apply(tenant string, st *tenantState, c *engram.Change) {
	before, after := c.Before, c.After
	if live(before) != live(after) {
		if live(after) {
			st.live++
		} else {
			st.live--
		}
	}
	if live(before) && live(after) && before.Category == after.Category && labelText(before) == labelText(after) {
		return // feedback, access or metadata: the label is unchanged
	}
	if live(before) {
		s.router.Forget(tenant, before.Category, labelText(before))
	}
	if live(after) {
		s.router.Observe(tenant, after.Category, labelText(after))
	}
}

func labelText(m *engram.Memory) string { return m.Content + "\n" + m.Summary }

func live(m *engram.Memory) bool { return m != nil && m.Valid && !m.Archived }
