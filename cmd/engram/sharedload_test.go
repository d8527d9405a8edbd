package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// liveIDs is one EachLive through s: the ids in order and the sequence.
func liveIDs(t *testing.T, s *sharedLoad, ctx context.Context) ([]string, int64) {
	t.Helper()
	var ids []string
	seq, err := s.EachLive(ctx, func(m *engram.Memory) error {
		ids = append(ids, m.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids, seq
}

// TestSharedLoad: the second load of a tenant takes the first one's
// memories while the feed has nothing after them, and reads the store
// when it has (a write in between), when they are too old, and for a
// tenant too big to hold; each answer is what the store holds. Both
// engines.
func TestSharedLoad(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "shared")
		var ms []*engram.Memory
		for i := range 30 {
			ms = append(ms, &engram.Memory{Category: "work", Content: fmt.Sprintf("Falcon note number %d", i)})
		}
		if _, err := db.CreateMemories(ctx, ms); err != nil {
			t.Fatal(err)
		}
		s := newSharedLoad(db)
		fromStore := func() ([]string, int64) { return liveIDs(t, &sharedLoad{DB: db, held: map[string]*heldLoad{}}, ctx) }
		tenant := engram.TenantFromContext(ctx)

		first, seq := liveIDs(t, s, ctx)
		if s.held[tenant] == nil || s.n != 30 {
			t.Fatalf("first load not held: %d memories held", s.n)
		}
		second, seq2 := liveIDs(t, s, ctx)
		if !slices.Equal(first, second) || seq2 != seq || len(s.held) != 0 || s.n != 0 {
			t.Fatalf("second load: %d ids at %d, want %d at %d; %d still held", len(second), seq2, len(first), seq, len(s.held))
		}

		// A write between the two loads: the second one reads the store.
		liveIDs(t, s, ctx)
		if _, err := db.CreateMemories(ctx, []*engram.Memory{{Category: "work", Content: "Falcon cutover done"}}); err != nil {
			t.Fatal(err)
		}
		got, gotSeq := liveIDs(t, s, ctx)
		want, wantSeq := fromStore()
		if !slices.Equal(got, want) || gotSeq != wantSeq || len(got) != 31 {
			t.Fatalf("after a write: %d ids at %d, the store %d at %d", len(got), gotSeq, len(want), wantSeq)
		}

		// Too old: not taken.
		s.held[tenant].at = time.Now().Add(-shareFor - time.Second)
		if h := s.take(tenant); h != nil || s.n != 0 {
			t.Errorf("a stale load was handed over")
		}

		// A tenant too big to hold, and the bound on all held memories.
		big := storetest.Tenant(t, db, "big")
		var many []*engram.Memory
		for i := range shareMax + 1 {
			many = append(many, &engram.Memory{Category: "life", Content: fmt.Sprintf("harbour walk %d", i)})
		}
		if err := db.SeedMemories(big, many); err != nil {
			t.Fatal(err)
		}
		if ids, _ := liveIDs(t, s, big); len(ids) != shareMax+1 || len(s.held) != 0 {
			t.Errorf("big tenant: %d ids, %d loads held", len(ids), len(s.held))
		}
		s.n = shareTotal - 10
		liveIDs(t, s, ctx)
		if s.held[tenant] != nil {
			t.Errorf("held past the bound of %d memories", shareTotal)
		}
	})
}
