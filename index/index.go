// Package index is recall's lexical index: one in-memory inverted index
// per tenant with exact BM25 over every query term, a cache of the
// candidate rows, and pseudo-relevance feedback drawn from the rows a
// search already fetched.
//
// The index is a cache of the store (DESIGN §2). A tenant's first search
// loads its live memories from one snapshot together with the feed
// sequence that snapshot includes; every search first applies the changes
// committed since, so a write made through any engram server on the same
// database is in the next search on every server. The memories table stays
// the source of truth; dropping the index loses nothing. Tenants are kept
// within a memory bound, the least recently used evicted and reloaded when
// needed.
package index

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"sync"
	"time"

	"github.com/engram-memory/engram"
)

// Source is what the index needs from the store: the change feed (a
// snapshot of the live memories and the changes after it) and the
// candidate rows by id, for the tenant in ctx.
type Source interface {
	engram.ChangeFeed
	LeanMemories(ctx context.Context, ids []string) ([]*engram.Memory, error)
}

// Config bounds the index.
type Config struct {
	// MaxBytes bounds the estimated memory of all tenants' indexes and row
	// caches; past it the least recently used tenants are dropped (the one
	// searching is always kept). Below 1, there is no bound.
	MaxBytes int64
	// RowCache is how many candidate rows each tenant keeps; 0 keeps none.
	RowCache int
	// Dir holds the tenants' snapshot files (see snapshot.go); "" keeps
	// none, and every cold tenant loads from the store.
	Dir string
	// Now is the clock expiry is judged by; nil is time.Now.
	Now func() time.Time
	// Logger reports snapshot files that could not be written; nil
	// discards.
	Logger *slog.Logger
}

// feedPage is how many changes one read of the feed returns.
const feedPage = 1000

// Index implements the lexical search of recall on per-tenant in-memory
// indexes that follow the store's change feed.
type Index struct {
	src Source
	cfg Config
	now func() time.Time // judges expiry

	mu      sync.Mutex
	tenants map[string]*tenant
	lru     *list.List // of tenant ids, most recently used first

	scratch sync.Pool      // of *scratch
	bg      sync.WaitGroup // snapshot writers
}

// New returns an Index over src.
func New(src Source, cfg Config) *Index {
	if cfg.MaxBytes < 1 {
		cfg.MaxBytes = math.MaxInt64
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Index{src: src, cfg: cfg, now: cfg.Now, tenants: map[string]*tenant{}, lru: list.New()}
}

// Stats describes one tenant's index, for benchmarks and metrics.
type Stats struct {
	Docs     int64 // live memories indexed
	Terms    int   // distinct terms
	Postings int64
	Bytes    int64 // estimated memory, row cache included
	Seq      int64 // last feed sequence applied
}

// Stats brings the index of the tenant in ctx up to date and describes it.
func (ix *Index) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	err := ix.read(ctx, func(t *tenant) error {
		s = Stats{Docs: t.liveDocs, Terms: len(t.post), Postings: t.nPost, Bytes: t.estimate(), Seq: t.seq}
		return nil
	})
	return s, err
}

// Drop forgets the index of the tenant in ctx; its next search reloads it.
func (ix *Index) Drop(ctx context.Context) {
	id := engram.TenantFromContext(ctx)
	ix.mu.Lock()
	t := ix.tenants[id]
	if t != nil {
		ix.lru.Remove(t.elem)
		delete(ix.tenants, id)
	}
	ix.mu.Unlock()
	if t != nil {
		t.mu.Lock()
		t.evicted = true
		t.mu.Unlock()
	}
}

// read brings the tenant's index up to date with every change committed
// before the call, then runs fn under the tenant's read lock.
func (ix *Index) read(ctx context.Context, fn func(*tenant) error) error {
	id := engram.TenantFromContext(ctx)
	arrived := time.Now()
	for {
		t := ix.tenant(id)
		t.mu.Lock()
		if t.evicted {
			t.mu.Unlock()
			continue
		}
		err := ix.sync(ctx, id, t, arrived)
		t.bytes.Store(t.estimate())
		t.big.Store(t.liveDocs >= snapshotMinDocs)
		t.mu.Unlock()
		if err != nil {
			return err
		}
		ix.bound(id)
		t.mu.RLock()
		if t.evicted || !t.loaded {
			t.mu.RUnlock()
			continue
		}
		err = fn(t)
		t.mu.RUnlock()
		return err
	}
}

// tenant returns the tenant's index, marked most recently used.
func (ix *Index) tenant(id string) *tenant {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	t := ix.tenants[id]
	if t == nil {
		t = newTenant(ix.cfg.RowCache)
		t.elem = ix.lru.PushFront(id)
		ix.tenants[id] = t
	} else {
		ix.lru.MoveToFront(t.elem)
	}
	return t
}

// bound drops the least recently used tenants other than keep while the
// indexes together exceed the memory bound; a tenant in use is skipped.
// Small tenants go first: a big one (a snapshot file's worth of memories)
// takes seconds to load again, a small one milliseconds, so a crowd of
// small tenants cycles through memory before a big one is dropped.
func (ix *Index) bound(keep string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var total int64
	for _, t := range ix.tenants {
		total += t.bytes.Load()
	}
	for _, bigToo := range []bool{false, true} {
		for e := ix.lru.Back(); e != nil && total > ix.cfg.MaxBytes; {
			prev := e.Prev()
			id := e.Value.(string)
			if v := ix.tenants[id]; id != keep && (bigToo || !v.big.Load()) && v.mu.TryLock() {
				v.evicted = true
				total -= v.bytes.Load()
				ix.lru.Remove(e)
				delete(ix.tenants, id)
				v.mu.Unlock()
			}
			e = prev
		}
	}
}

// sync brings the tenant's index up to date under t.mu: a load the first
// time (from its snapshot file if there is a usable one, else from one
// snapshot read of the store), then the feed's changes since. A read of
// the feed that started after the caller arrived already holds every
// change committed before it arrived, so the caller need not read again.
// The feed's sequence has no gaps; a gap (events folded by the sleep cycle
// after a snapshot was written) makes the tenant load from the store.
func (ix *Index) sync(ctx context.Context, id string, t *tenant, arrived time.Time) error {
	if !t.loaded {
		start := time.Now()
		t.reset()
		if ix.snapshots(id) && ix.readSnapshot(id, t) {
			t.loaded, t.snapSeq = true, t.seq
		} else {
			if err := ix.load(ctx, t); err != nil {
				return err
			}
			t.syncedAt = start
		}
	}
	if t.syncedAt.After(arrived) {
		return nil
	}
	start := time.Now()
	reloaded := false
	for {
		changes, err := ix.src.Changes(ctx, t.seq, feedPage)
		if err != nil {
			return fmt.Errorf("index: read changes: %w", err)
		}
		gap := false
		for _, c := range changes {
			if c.Seq != t.seq+1 && !reloaded {
				gap = true
				break
			}
			t.apply(c)
			t.seq = c.Seq
		}
		if gap {
			// Load once from the store; its head is recent, and events
			// are folded only once they are old.
			if ix.snapshots(id) {
				_ = os.Remove(ix.snapPath(id))
			}
			if err := ix.load(ctx, t); err != nil {
				return err
			}
			reloaded = true
			continue
		}
		if len(changes) < feedPage {
			t.syncedAt = start
			break
		}
	}
	if ix.snapshots(id) && t.liveDocs >= snapshotMinDocs && t.seq-t.snapSeq >= max(snapshotMinChanges, t.liveDocs/4) {
		// Written in the background under the read lock: searches go on,
		// the next sync waits for it.
		t.snapSeq = t.seq
		ix.bg.Add(1)
		go func() {
			defer ix.bg.Done()
			t.mu.RLock()
			defer t.mu.RUnlock()
			if t.evicted || !t.loaded {
				return
			}
			if err := ix.writeSnapshot(id, t); err != nil {
				ix.cfg.Logger.Warn("index snapshot not written; the tenant loads from the store", "tenant", id, "err", err)
			}
		}()
	}
	return nil
}

// Close waits for the snapshot files being written.
func (ix *Index) Close() { ix.bg.Wait() }

// Load drops the index of the tenant in ctx and loads it again, from its
// snapshot file when fromSnapshot is set and there is one, else from the
// store (its snapshot file is removed first); it returns the index's
// statistics. Benchmarks use it to time a cold tenant.
func (ix *Index) Load(ctx context.Context, fromSnapshot bool) (Stats, error) {
	ix.Drop(ctx)
	if id := engram.TenantFromContext(ctx); !fromSnapshot && ix.snapshots(id) {
		if err := os.Remove(ix.snapPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Stats{}, fmt.Errorf("index: remove snapshot: %w", err)
		}
	}
	return ix.Stats(ctx)
}

// Snapshot writes the snapshot file of the tenant in ctx now, after
// applying the changes committed before the call.
func (ix *Index) Snapshot(ctx context.Context) error {
	id := engram.TenantFromContext(ctx)
	if !ix.snapshots(id) {
		return errors.New("index: no snapshot directory, or a tenant id unfit for a file name")
	}
	return ix.read(ctx, func(t *tenant) error {
		if err := ix.writeSnapshot(id, t); err != nil {
			return err
		}
		t.snapSeq = t.seq
		return nil
	})
}

// load fills the empty tenant from one snapshot read of the store.
func (ix *Index) load(ctx context.Context, t *tenant) error {
	t.reset()
	seq, err := ix.src.EachLive(ctx, func(m *engram.Memory) error {
		t.put(m)
		return nil
	})
	if err != nil {
		t.reset()
		return fmt.Errorf("index: load tenant: %w", err)
	}
	t.loaded, t.seq, t.snapSeq = true, seq, 0
	return nil
}

// snapshots reports whether the tenant's index is kept in a snapshot file:
// a directory is configured and the tenant id is a safe file name.
func (ix *Index) snapshots(id string) bool {
	if ix.cfg.Dir == "" || id == "" {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// Tenants returns the ids of the tenants whose indexes are in memory, the
// most recently used first.
func (ix *Index) Tenants() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make([]string, 0, ix.lru.Len())
	for e := ix.lru.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(string))
	}
	return out
}

// Forget drops the index of the tenant in ctx and deletes its snapshot
// file, after the store erased some of its memories (an end user
// forgotten): neither the loaded postings nor the file keep their terms,
// and the next search loads from the store.
func (ix *Index) Forget(ctx context.Context) error {
	ix.Drop(ctx)
	id := engram.TenantFromContext(ctx)
	if !ix.snapshots(id) {
		return nil
	}
	if err := os.Remove(ix.snapPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("index: forget: %w", err)
	}
	return nil
}
