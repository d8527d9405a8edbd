package learning_test

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store/storetest"
)

// TestExploreHoldsBack: with exploration on every recall, one of the best
// injected memories is held back and recorded, never a P0 memory or a key
// the query names exactly; feedback on such a recall counts as an outcome
// without that memory, and the impact estimate reads it.
func TestExploreHoldsBack(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "explore")
	r := newRecaller(t, db, fixedRouter{[]string{engram.CategoryWork}}, engram.DefaultRecallConfig()).WithExplore(1)
	p0 := memory(engram.CategoryWork, "Identity: the deploy bot answers to Ada")
	p0.Priority = engram.P0
	keyed := memory(engram.CategoryWork, "The deploy window opens at nine")
	keyed.Key = "/work/deploy/window"
	keyed.Source = []byte(`"test"`)
	stored := addMemories(t, db, ctx, append([]*engram.Memory{p0, keyed,
		memory(engram.CategoryWork, "Deploy rollbacks need two approvals"),
		memory(engram.CategoryWork, "The deploy pipeline runs the smoke tests first")},
		fillers(engram.CategoryLife, 10)...)...)
	fb := learning.NewFeedback(db, learning.NewScorer(learning.DefaultScoreConfig(), nil), engram.DefaultFeedbackConfig())
	heldCount := map[string]int{}
	for range 30 {
		rec := recall(t, r, ctx, engram.RecallRequest{Query: "deploy /work/deploy/window", TokenBudget: 500})
		if rec.HeldBack == nil {
			t.Fatal("exploration at 1 held nothing back")
		}
		h := rec.HeldBack.ID
		if h == stored[0].ID || h == stored[1].ID {
			t.Fatalf("held back %s: a P0 memory or the key the query names", h)
		}
		if _, i := findItem(rec.Items, h); i >= 0 {
			t.Fatalf("held-back %s was injected anyway", h)
		}
		heldCount[h]++
		if _, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbUp, Rater: "r"}); err != nil {
			t.Fatal(err)
		}
	}
	for id, n := range heldCount {
		imp, err := fb.Impact(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if imp.Without.N != int64(n) || imp.Without.Mean != 1 {
			t.Errorf("%s held back %d times; impact says %+v", id, n, imp.Without)
		}
		if imp.With.N > 0 && (imp.Effect == nil || len(imp.CI) != 2 || imp.CI[0] > *imp.Effect || imp.CI[1] < *imp.Effect) {
			t.Errorf("%s: effect %v with interval %v", id, imp.Effect, imp.CI)
		}
	}
	if _, err := fb.Impact(ctx, "mem_unknown"); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("impact of an unknown memory: %v", err)
	}
}

// TestHelpfulFactor: a memory with nothing but bad answers sinks within a
// handful of recalls; one as good as the tenant's answers keeps its score;
// a measured negative impact halves the factor.
func TestHelpfulFactor(t *testing.T) {
	s := learning.NewScorer(learning.DefaultScoreConfig(), nil)
	base := engram.Helpfulness{Good: 60, Bad: 40}
	if f, _ := s.Helpful(engram.Helpfulness{}, base); f != 1 {
		t.Errorf("no evidence: %v, want 1", f)
	}
	if f, _ := s.Helpful(engram.Helpfulness{Good: 12, Bad: 6}, base); f != 1 {
		t.Errorf("better than the base rate: %v, want 1", f)
	}
	prev := 1.0
	for n := 1; n <= 5; n++ {
		f, _ := s.Helpful(engram.Helpfulness{Bad: float64(n)}, base)
		if !(f < prev) {
			t.Errorf("%d bad answers: %v, not below %v", n, f, prev)
		}
		prev = f
	}
	if !(prev < 0.35) {
		t.Errorf("five bad answers leave the factor at %v", prev)
	}
	h := engram.Helpfulness{Good: 3, Bad: 3, With: engram.Outcomes{N: 6, Sum: -6, Sq: 6}, Without: engram.Outcomes{N: 4, Sum: 4, Sq: 4}}
	plain, _ := s.Helpful(engram.Helpfulness{Good: 3, Bad: 3}, base)
	f, effect := s.Helpful(h, base)
	if effect == nil || *effect != -2 || f != plain/2 {
		t.Errorf("negative impact: factor %v effect %v, want %v and -2", f, effect, plain/2)
	}
}

// TestRaterWeight: an unknown rater counts fully; one that keeps
// contradicting the others fades.
func TestRaterWeight(t *testing.T) {
	f := learning.NewFeedback(nil, learning.NewScorer(learning.DefaultScoreConfig(), nil), engram.DefaultFeedbackConfig())
	if w := f.RaterWeight(engram.Reputation{}); w != 1 {
		t.Errorf("new rater: %v", w)
	}
	if w := f.RaterWeight(engram.Reputation{Agree: 20, Disagree: 18}); w != 1 {
		t.Errorf("a rater that agrees about as often as not: %v", w)
	}
	if w := f.RaterWeight(engram.Reputation{Agree: 2, Disagree: 20}); !(w < 0.5) {
		t.Errorf("a contradicting rater: %v", w)
	}
	base := engram.Helpfulness{Good: 50, Bad: 50}
	bad := []engram.Helpfulness{{Bad: 6}, {Bad: 4, Good: 1}}
	if a := f.Agreement(1, bad, base); !(a < -0.5) {
		t.Errorf("thumb up on memories others judged bad: agreement %v", a)
	}
	if a := f.Agreement(-1, bad, base); !(a > 0.5) {
		t.Errorf("thumb down on them: agreement %v", a)
	}
	if a := f.Agreement(1, []engram.Helpfulness{{}}, base); a != 0 {
		t.Errorf("nothing known: agreement %v", a)
	}
}
