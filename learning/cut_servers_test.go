package learning_test

import (
	"slices"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestCutSameOnTwoServers: the relevance cut reads only what the store
// holds (the index follows its change feed), so two servers over one
// database inject the same memories with the same match and leave out
// the same ones for the same reasons, and a memory written through one is
// what the other injects next.
func TestCutSameOnTwoServers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		opts := storetest.Options(t, engine)
		db := storetest.OpenWith(t, opts)
		ctx := storetest.Tenant(t, db, "cut-servers")
		cutTenant(t, db, ctx)
		one := newRecaller(t, db, fixedRouter{allCategories}, engram.DefaultRecallConfig())
		two := newRecaller(t, storetest.OpenWith(t, opts), fixedRouter{allCategories}, engram.DefaultRecallConfig())

		same := func(query string) *engram.Recall {
			t.Helper()
			req := engram.RecallRequest{Query: query, TokenBudget: 2000}
			a, b := recall(t, one, ctx, req), recall(t, two, ctx, req)
			if !slices.Equal(ids(a.Items), ids(b.Items)) || !slices.Equal(ids(a.LeftOut), ids(b.LeftOut)) {
				t.Fatalf("%q: injected %v, left out %v on one server; %v, %v on the other",
					query, ids(a.Items), ids(a.LeftOut), ids(b.Items), ids(b.LeftOut))
			}
			for i := range a.Items {
				if a.Items[i].Breakdown.Match != b.Items[i].Breakdown.Match {
					t.Errorf("%q: %s matches %v on one server, %v on the other", query, a.Items[i].ID,
						a.Items[i].Breakdown.Match, b.Items[i].Breakdown.Match)
				}
			}
			for i := range a.LeftOut {
				if a.LeftOut[i].Breakdown.Cut != b.LeftOut[i].Breakdown.Cut {
					t.Errorf("%q: %s left out for %q on one server, %q on the other", query, a.LeftOut[i].ID,
						a.LeftOut[i].Breakdown.Cut, b.LeftOut[i].Breakdown.Cut)
				}
			}
			return a
		}
		same("which days does the payments team ship deploys?")
		if rec := same("How many moons does Neptune have?"); len(rec.Items) != 0 {
			t.Fatalf("a query nothing answers injected %v", ids(rec.Items))
		}
		neptune := addMemories(t, db, ctx, memory(engram.CategoryLife, "Neptune has sixteen known moons"))[0]
		if rec := same("How many moons does Neptune have?"); !slices.Contains(ids(rec.Items), neptune.ID) {
			t.Errorf("after a write through one server, the other injected %v, want %s", ids(rec.Items), neptune.ID)
		}
	})
}
