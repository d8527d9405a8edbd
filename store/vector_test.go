package store_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// The vector cache: a server's own vectors count at once, another
// server's once the cached set is older than the TTL, other users'
// vectors never, and a cache too small for two tenants still answers
// both; with the cache off every search reads the store.
func TestVectorCache(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		var clock atomic.Int64
		clock.Store(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC).UnixNano())
		o := storetest.Options(t, engine)
		o.Now = func() time.Time { return time.Unix(0, clock.Load()) }
		o.VectorCacheTTL = time.Minute
		a := storetest.OpenWith(t, o)
		b := storetest.OpenWith(t, o) // a second server on the same database
		o.VectorCacheBytes = -1
		uncached := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, a, "acme")
		ann := engram.NewContextWithUser(ctx, "ann")

		mk := func(ctx context.Context, content string) string {
			t.Helper()
			m, err := a.CreateMemory(ctx, &engram.Memory{Content: content, Category: "life"})
			if err != nil {
				t.Fatal(err)
			}
			return m.Memory.ID
		}
		save := func(db *store.DB, ctx context.Context, id string, v ...float32) {
			t.Helper()
			if err := db.SaveVector(ctx, id, "m", v); err != nil {
				t.Fatal(err)
			}
		}
		// found lists the ids a search from (1, 0, 0) finds, best first.
		found := func(db *store.DB, ctx context.Context) []string { return searchIDs(t, db, ctx, "", 10) }
		one, two, three, annS := mk(ctx, "tea in the morning"), mk(ctx, "coffee after lunch"), mk(ctx, "cocoa at night"), mk(ann, "ann's own note")
		save(a, ctx, one, 1, 0, 0)
		if got := found(a, ctx); !slices.Equal(got, []string{one}) {
			t.Fatalf("first search: %v", got)
		}
		save(a, ctx, two, 0.9, 0.1, 0) // this server: seen at once
		if got := found(a, ctx); !slices.Equal(got, []string{one, two}) {
			t.Fatalf("after this server's save: %v", got)
		}
		save(b, ctx, three, 0.8, 0.2, 0) // another server: seen after the TTL
		save(b, ann, annS, 1, 0.01, 0)
		if got := found(a, ctx); !slices.Equal(got, []string{one, two}) {
			t.Fatalf("another server's vector before the TTL: %v", got)
		}
		clock.Add(int64(time.Minute))
		if got := found(a, ctx); !slices.Equal(got, []string{one, two, three}) {
			t.Fatalf("another server's vector after the TTL: %v", got)
		}
		if got := found(a, ann); !slices.Equal(got, []string{one, annS, two, three}) {
			t.Fatalf("ann sees her own and the shared vectors: %v", got)
		}
		// A re-embedded text replaces its vector in the cache.
		save(a, ctx, one, 0, 1, 0)
		if got := found(a, ctx); !slices.Equal(got, []string{two, three, one}) {
			t.Fatalf("after re-embedding: %v", got)
		}
		if got := found(uncached, ctx); !slices.Equal(got, []string{two, three, one}) {
			t.Fatalf("without the cache: %v", got)
		}

		// A cache that holds one tenant's vectors at a time answers both.
		o.VectorCacheBytes = 1
		small := storetest.OpenWith(t, o)
		other := storetest.Tenant(t, a, "globex")
		four := mk(other, "globex memo")
		save(a, other, four, 1, 0, 0)
		for range 2 {
			if got := found(small, ctx); !slices.Equal(got, []string{two, three, one}) {
				t.Fatalf("small cache, acme: %v", got)
			}
			if got := found(small, other); !slices.Equal(got, []string{four}) {
				t.Fatalf("small cache, globex: %v", got)
			}
		}

		// Searches while this server saves, reloads included (the race
		// detector watches the cache's locks).
		var ids []string
		for range 20 {
			ids = append(ids, mk(ctx, "note "+time.Now().String()))
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 20 {
					if _, err := a.VectorSearch(ctx, "m", []float32{1, 0, 0}, "", 10); err != nil {
						t.Error(err)
					}
				}
			})
		}
		for i, id := range ids {
			if i == 10 {
				clock.Add(int64(time.Minute))
			}
			save(a, ctx, id, 0, 0, 1)
		}
		wg.Wait()
	})
}

// The shortlist holds only memories the search may return: another
// agent's vectors and those of deleted memories never take the places
// of the agent's own live ones, with the cache on or off.
func TestVectorSearchShortlist(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		cached := storetest.OpenWith(t, o)
		o.VectorCacheBytes = -1
		uncached := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, cached, "acme")
		mk := func(agent, content string, v ...float32) string {
			t.Helper()
			m, err := cached.CreateMemory(ctx, &engram.Memory{Content: content, Category: "life", AgentID: agent})
			if err != nil {
				t.Fatal(err)
			}
			if err := cached.SaveVector(ctx, m.Memory.ID, "m", v); err != nil {
				t.Fatal(err)
			}
			return m.Memory.ID
		}
		for i := range 30 {
			mk("planner", fmt.Sprintf("planner note %d", i), 1, 0, 0)
			gone := mk("", fmt.Sprintf("retracted note %d", i), 1, 0.01, 0)
			if _, err := cached.DeleteMemory(ctx, gone, nil); err != nil {
				t.Fatal(err)
			}
		}
		own := mk("writer", "the writer's outline", 0.5, 0.5, 0)
		shared := mk("", "the house style", 0.4, 0.6, 0)
		for name, db := range map[string]*store.DB{"cached": cached, "uncached": uncached} {
			if ids := searchIDs(t, db, ctx, "writer", 5); !slices.Equal(ids, []string{own, shared}) {
				t.Fatalf("%s: the writer's search found %v, want its own and the shared memory", name, ids)
			}
		}
	})
}

// Between whole reads a cached set reads only the vectors saved since its
// last read: another server's new and re-embedded vectors arrive after
// the TTL, and so do its deletes and moves to another agent; a vector
// stamped by a clock running far behind waits for the next whole read
// (60 × the TTL).
func TestVectorCachePartialReads(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		var clock atomic.Int64
		clock.Store(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC).UnixNano())
		o := storetest.Options(t, engine)
		o.Now = func() time.Time { return time.Unix(0, clock.Load()) }
		o.VectorCacheTTL = time.Second
		a := storetest.OpenWith(t, o)
		b := storetest.OpenWith(t, o)
		o.Now = func() time.Time { return time.Unix(0, clock.Load()).Add(-10 * time.Minute) }
		late := storetest.OpenWith(t, o) // a server whose clock runs ten minutes behind
		ctx := storetest.Tenant(t, a, "acme")
		mk := func(db *store.DB, content string, v ...float32) string {
			t.Helper()
			m, err := db.CreateMemory(ctx, &engram.Memory{Content: content, Category: "life"})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SaveVector(ctx, m.Memory.ID, "m", v); err != nil {
				t.Fatal(err)
			}
			return m.Memory.ID
		}
		found := func() []string { return searchIDs(t, a, ctx, "", 10) }
		one, three := mk(a, "tea in the morning", 1, 0, 0), mk(a, "juice at noon", 0.5, 0.5, 0)
		if got := found(); !slices.Equal(got, []string{one, three}) {
			t.Fatalf("first search: %v", got)
		}
		two := mk(b, "coffee after lunch", 0.9, 0.1, 0)
		lag := mk(late, "cocoa at night", 0.8, 0.2, 0)
		clock.Add(int64(10 * time.Second)) // past the TTL and the clock slack
		if got := found(); !slices.Equal(got, []string{one, two, three}) {
			t.Fatalf("a partial read: %v, want the new vector and not the late clock's", got)
		}
		if err := b.SaveVector(ctx, one, "m", []float32{0, 1, 0}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.DeleteMemory(ctx, two, nil); err != nil {
			t.Fatal(err)
		}
		clock.Add(int64(10 * time.Second)) // past the TTL and the clock slack
		if got := found(); !slices.Equal(got, []string{three, one}) {
			t.Fatalf("after another server re-embedded one and deleted two: %v", got)
		}
		if n := store.CachedVectors(ctx, a); n != 2 {
			t.Fatalf("the partial read left %d vectors cached, want the deleted memory's out", n)
		}
		// Another server moves three to the planner agent: the planner's
		// search finds it after the TTL, the shared search no longer.
		planner := "planner"
		if _, err := b.UpdateMemory(ctx, three, engram.MemoryUpdate{AgentID: &planner}); err != nil {
			t.Fatal(err)
		}
		clock.Add(int64(10 * time.Second)) // past the TTL and the clock slack
		hits, err := a.VectorSearch(ctx, "m", []float32{1, 0, 0}, planner, 10)
		if err != nil || len(hits) != 2 || hits[0].Memory.ID != three {
			t.Fatalf("the planner's search after the move: %v %v", hits, err)
		}
		if got := found(); !slices.Equal(got, []string{one}) {
			t.Fatalf("the shared search after the move: %v", got)
		}
		clock.Add(int64(time.Minute))
		if got := found(); !slices.Equal(got, []string{lag, one}) {
			t.Fatalf("a whole read: %v, want the late clock's vector too", got)
		}
	})
}

// Forgetting an end user, or resetting the tenant, takes their vectors out
// of this server's cache at once, not at the next whole read.
func TestVectorCacheForget(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		ann := engram.NewContextWithUser(ctx, "ann")
		for i, c := range []context.Context{ctx, ann} {
			m, err := db.CreateMemory(c, &engram.Memory{Content: fmt.Sprint("note ", i), Category: "life"})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.SaveVector(c, m.Memory.ID, "m", []float32{1, float32(i), 0}); err != nil {
				t.Fatal(err)
			}
		}
		search := func() {
			t.Helper()
			if _, err := db.VectorSearch(ann, "m", []float32{1, 0, 0}, "", 10); err != nil {
				t.Fatal(err)
			}
		}
		search()
		if n := store.CachedVectors(ctx, db); n != 2 {
			t.Fatalf("cached %d vectors, want 2", n)
		}
		if _, _, err := db.ForgetUser(ctx, "ann"); err != nil {
			t.Fatal(err)
		}
		if n := store.CachedVectors(ctx, db); n != 0 {
			t.Fatalf("after forgetting ann the cache holds %d vectors", n)
		}
		search()
		if n := store.CachedVectors(ctx, db); n != 1 {
			t.Fatalf("after the next search the cache holds %d vectors, want the shared one", n)
		}
		if _, err := db.ResetTenant(ctx); err != nil {
			t.Fatal(err)
		}
		if n := store.CachedVectors(ctx, db); n != 0 {
			t.Fatalf("after a reset the cache holds %d vectors", n)
		}
	})
}

// searchIDs lists the ids a search from (1, 0, 0) for agent finds, best
// first.
func searchIDs(t *testing.T, db *store.DB, ctx context.Context, agent string, limit int) []string {
	t.Helper()
	hits, err := db.VectorSearch(ctx, "m", []float32{1, 0, 0}, agent, limit)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Memory.ID)
	}
	return ids
}
