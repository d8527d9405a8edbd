package router

import (
	"container/list"
	"context"
	"fmt"
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
		tenants: map[string]*tenantState{}, lru: list.New()}
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
		st = &tenantState{}
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

// sync brings the tenant's model up to date under st.mu: a load from a
// snapshot the first time, then the feed's changes since. A read of the
// feed that started after the caller arrived already holds every change
// committed before it arrived, so the caller need not read again.
func (s *Service) sync(ctx context.Context, tenant string, st *tenantState, arrived time.Time) error {
	if !st.loaded {
		start := s.now()
		s.router.Drop(tenant)
		seq, err := s.feed.EachLive(ctx, func(m *engram.Memory) error {
			s.router.Observe(tenant, m.Category, labelText(m))
			return nil
		})
		if err != nil {
			s.router.Drop(tenant)
			return fmt.Errorf("router: load tenant: %w", err)
		}
		st.loaded, st.seq, st.syncedAt = true, seq, start
	}
	if st.syncedAt.After(arrived) {
		return nil
	}
	start := s.now()
	for {
		changes, err := s.feed.Changes(ctx, st.seq, feedPage)
		if err != nil {
			return fmt.Errorf("router: read changes: %w", err)
		}
		for _, c := range changes {
			s.apply(tenant, c)
			st.seq = c.Seq
		}
		if len(changes) < feedPage {
			st.syncedAt = start
			return nil
		}
	}
}

// apply learns one change: the memory's old label is forgotten and its new
// one observed, each when live, so a model kept current by changes equals
// one loaded afresh.
func (s *Service) apply(tenant string, c *engram.Change) {
	before, after := c.Before, c.After
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
