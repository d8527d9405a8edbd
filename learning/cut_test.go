package learning_test

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// identityRouter is fixedRouter with Route.Identity set: the route asks
// for the pinned identity block.
type identityRouter struct{ fixedRouter }

func (r identityRouter) RouteQuery(ctx context.Context, query string) (*engram.Route, error) {
	rt, err := r.fixedRouter.RouteQuery(ctx, query)
	if err != nil {
		return nil, err
	}
	rt.Identity = true
	return rt, nil
}

var allCategories = []string{engram.CategoryPreference, engram.CategoryWork, engram.CategoryLife, engram.CategoryStrategy}

// cutTenant stores a tenant with a few memories about deploys, one
// preference that only shares a word with them, a P0 identity memory and
// fillers, and returns them by name.
func cutTenant(t *testing.T, db *store.DB, ctx context.Context) map[string]*engram.Memory {
	t.Helper()
	p0 := memory(engram.CategoryLife, "The user's name is Ada Okafor")
	p0.Priority = engram.P0
	ms := append([]*engram.Memory{
		memory(engram.CategoryWork, "The payments team ships deploys on Tuesdays and Thursdays"),
		memory(engram.CategoryWork, "Payments deploys need a green canary before they ship"),
		memory(engram.CategoryPreference, "Budget per night, and do you want dinner included on the team trip?"),
		p0,
	}, fillers(engram.CategoryLife, 40)...)
	stored := addMemories(t, db, ctx, ms...)
	return map[string]*engram.Memory{"days": stored[0], "canary": stored[1], "trip": stored[2], "p0": stored[3]}
}

func ids(items []engram.RecallItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// TestRelevanceCut: a recall injects the memories that answer its query
// and stops where the match falls off, far below the budget; a preference
// that shares one word with the query neither goes first nor goes in; a
// query nothing answers injects nothing; what was found but left out is
// listed, best first, with why. With fill the budget is a target again,
// the identity block goes in and preferences go first whatever their
// match.
func TestRelevanceCut(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "cut")
		m := cutTenant(t, db, ctx)
		r := newRecaller(t, db, fixedRouter{allCategories}, engram.DefaultRecallConfig())

		rec := recall(t, r, ctx, engram.RecallRequest{Query: "which days does the payments team ship deploys?", TokenBudget: 2000})
		if got := ids(rec.Items); !slices.Contains(got, m["days"].ID) || slices.Contains(got, m["trip"].ID) || slices.Contains(got, m["p0"].ID) {
			t.Errorf("injected %v: want the deploy days, not the trip question nor the identity", got)
		}
		if rec.Items[0].ID != m["days"].ID {
			t.Errorf("first injected %s, want the memory that answers", rec.Items[0].ID)
		}
		if rec.TokensUsed > 100 {
			t.Errorf("tokens_used %d for two short memories: the budget is a ceiling, not a target", rec.TokensUsed)
		}
		for _, it := range rec.Items {
			if !(it.Breakdown.Match > 0 && it.Breakdown.Match <= 1) || it.Breakdown.Cut != "" || it.Breakdown.Pinned {
				t.Errorf("injected %s: match %v, cut %q, pinned %v", it.ID, it.Breakdown.Match, it.Breakdown.Cut, it.Breakdown.Pinned)
			}
		}
		left, i := findItem(rec.LeftOut, m["trip"].ID)
		if i < 0 || left.Breakdown.Cut != "below_cut" || !(left.Breakdown.Match < rec.Items[0].Breakdown.Match) {
			t.Errorf("the trip question is not left out below the cut: %+v", rec.LeftOut)
		}
		if len(rec.LeftOut) > 10 || !slices.IsSortedFunc(rec.LeftOut, func(a, b engram.RecallItem) int { return cmp.Compare(b.Score, a.Score) }) {
			t.Errorf("left_out: %d items, want at most 10, best first", len(rec.LeftOut))
		}

		none := recall(t, r, ctx, engram.RecallRequest{Query: "How many moons does Neptune have?", TokenBudget: 2000})
		if len(none.Items) != 0 || none.Context != "" || none.TokensUsed != 0 {
			t.Errorf("a query nothing answers injected %v (%d tokens)", ids(none.Items), none.TokensUsed)
		}

		fill := recall(t, r, ctx, engram.RecallRequest{Query: "which days does the payments team ship deploys?", TokenBudget: 2000, Fill: true})
		if len(fill.Items) <= len(rec.Items) || fill.Items[0].ID != m["p0"].ID || fill.Items[1].ID != m["trip"].ID {
			t.Errorf("fill: %v (cut %d items); want every candidate, the identity block then the preference first", ids(fill.Items), len(rec.Items))
		}
		if len(fill.LeftOut) != 0 {
			t.Errorf("fill left out %d candidates within the budget", len(fill.LeftOut))
		}

		// A budget that fits one memory leaves the other out for budget.
		tight := recall(t, r, ctx, engram.RecallRequest{Query: "which days does the payments team ship deploys?", TokenBudget: rec.Items[0].Tokens + 6})
		if len(tight.Items) != 1 {
			t.Fatalf("tight budget: %v", ids(tight.Items))
		}
		budget := 0
		for _, it := range tight.LeftOut {
			if it.Breakdown.Cut == "budget" {
				budget++
			}
		}
		if budget != len(rec.Items)-1 {
			t.Errorf("tight budget: %d left out for budget, want %d: %+v", budget, len(rec.Items)-1, tight.LeftOut)
		}
	})
}

// TestPinnedIsContext: a pinned P0 memory goes in only when the request
// or the route asks for the identity block, then first and marked pinned,
// whatever the query; when it is the recall's best match it is an
// ordinary candidate and needs no asking.
func TestPinnedIsContext(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "pinned")
		m := cutTenant(t, db, ctx)
		plain := newRecaller(t, db, fixedRouter{allCategories}, engram.DefaultRecallConfig())
		routed := newRecaller(t, db, identityRouter{fixedRouter{allCategories}}, engram.DefaultRecallConfig())
		const q = "which days does the payments team ship deploys?"

		for _, tc := range []struct {
			name string
			rec  *engram.Recall
		}{
			{"identity asked", recall(t, plain, ctx, engram.RecallRequest{Query: q, TokenBudget: 2000, Identity: true})},
			{"route asks", recall(t, routed, ctx, engram.RecallRequest{Query: q, TokenBudget: 2000})},
		} {
			first := tc.rec.Items[0]
			if first.ID != m["p0"].ID || !first.Breakdown.Pinned {
				t.Errorf("%s: first item %s pinned=%v, want the identity memory as context", tc.name, first.ID, first.Breakdown.Pinned)
			}
			if _, i := findItem(tc.rec.Items, m["days"].ID); i != 1 {
				t.Errorf("%s: the answer at %d, want right after the identity block", tc.name, i)
			}
		}

		// Nothing answers: the identity block alone, when asked.
		rec := recall(t, plain, ctx, engram.RecallRequest{Query: "How many moons does Neptune have?", TokenBudget: 2000, Identity: true})
		if got := ids(rec.Items); len(got) != 1 || got[0] != m["p0"].ID {
			t.Errorf("a query nothing answers, identity asked: %v, want the identity block alone", got)
		}

		// The identity memory answers: an ordinary candidate.
		rec = recall(t, plain, ctx, engram.RecallRequest{Query: "what is the user's name? Ada Okafor?", TokenBudget: 2000})
		it, i := findItem(rec.Items, m["p0"].ID)
		if i != 0 || it.Breakdown.Pinned || it.Breakdown.Relevance != 1 {
			t.Errorf("the identity memory as best match: at %d, %+v", i, it.Breakdown)
		}
	})
}

// TestCutGroupsOrder: among what passes the cut, preferences go first,
// then proven strategies, then the rest, each by score; a preference that
// does not pass is not injected at all (left out below the cut when the
// query's expansion found it).
func TestCutGroupsOrder(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "order")
		stored := addMemories(t, db, ctx, append([]*engram.Memory{
			memory(engram.CategoryWork, "Release notes for the mobile release go out on Fridays after the release review"),
			memory(engram.CategoryPreference, "The user wants release notes for the mobile release kept short"),
			memory(engram.CategoryStrategy, "For a mobile release, draft the release notes from the merged tickets"),
			memory(engram.CategoryPreference, "The user likes short walks"),
		}, fillers(engram.CategoryLife, 30)...)...)
		r := newRecaller(t, db, fixedRouter{allCategories}, engram.DefaultRecallConfig())
		rec := recall(t, r, ctx, engram.RecallRequest{Query: "mobile release notes", TokenBudget: 2000})
		want := []string{stored[1].ID, stored[2].ID, stored[0].ID}
		if got := ids(rec.Items); !slices.Equal(got, want) {
			t.Errorf("injected %v, want preference, strategy, experience %v", got, want)
		}
		if it, i := findItem(rec.LeftOut, stored[3].ID); i >= 0 && it.Breakdown.Cut != "below_cut" {
			t.Errorf("a preference that matches nothing left out for %q", it.Breakdown.Cut)
		}
	})
}

// TestCutSuperseded: of two passing memories of one subject, the older
// is left out as superseded, naming the newer; asked to fill, both go in.
func TestCutSuperseded(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "superseded")
		chat := []byte(`{"kind":"chat","name":"support"}`)
		older := &engram.Memory{Category: engram.CategoryPreference, Content: "Dana's favourite tea is oolong green tea from Fujian", Source: chat}
		stored := addMemories(t, db, ctx, append([]*engram.Memory{older}, fillers(engram.CategoryWork, 10)...)...)
		newer := addMemories(t, db, ctx, &engram.Memory{Category: engram.CategoryPreference, Content: "Dana's favourite tea is jasmine green tea from Fujian", Source: chat})[0]
		r := newRecaller(t, db, fixedRouter{allCategories}, engram.DefaultRecallConfig())
		rec := recall(t, r, ctx, engram.RecallRequest{Query: "what tea does Dana like", TokenBudget: 2000})
		if got := ids(rec.Items); !slices.Equal(got, []string{newer.ID}) {
			t.Errorf("injected %v, want the newer alone", got)
		}
		left, i := findItem(rec.LeftOut, stored[0].ID)
		if i < 0 || left.Breakdown.Cut != "superseded" || left.Breakdown.SupersededBy != newer.ID {
			t.Errorf("the older is not left out as superseded by the newer: %+v", rec.LeftOut)
		}
		fill := recall(t, r, ctx, engram.RecallRequest{Query: "what tea does Dana like", TokenBudget: 2000, Fill: true})
		if len(fill.Items) < 2 {
			t.Errorf("fill: %v", ids(fill.Items))
		}
	})
}
