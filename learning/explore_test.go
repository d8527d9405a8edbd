package learning_test

import (
	"strings"
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
		rec := recall(t, r, ctx, engram.RecallRequest{Query: "deploy /work/deploy/window", TokenBudget: 500, Fill: true})
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

// TestSeedExplore: after SeedExplore with the same seed, the same recalls
// hold back the same memories; another seed holds back others.
func TestSeedExplore(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "seeded")
	r := newRecaller(t, db, fixedRouter{[]string{engram.CategoryWork}}, engram.DefaultRecallConfig()).WithExplore(0.5)
	addMemories(t, db, ctx, append([]*engram.Memory{
		memory(engram.CategoryWork, "Deploy rollbacks need two approvals"),
		memory(engram.CategoryWork, "The deploy pipeline runs the smoke tests first"),
		memory(engram.CategoryWork, "Deploy freezes start on the last Friday of a quarter")},
		fillers(engram.CategoryLife, 10)...)...)
	held := func(seed uint64) string {
		r.SeedExplore(seed)
		var out []string
		for range 40 {
			rec := recall(t, r, ctx, engram.RecallRequest{Query: "deploy", TokenBudget: 500})
			if rec.HeldBack == nil {
				out = append(out, "-")
			} else {
				out = append(out, rec.HeldBack.ID)
			}
		}
		return strings.Join(out, ",")
	}
	first, again, other := held(7), held(7), held(8)
	if first != again {
		t.Errorf("seed 7 held back\n%s\nthen\n%s", first, again)
	}
	if first == other {
		t.Errorf("seeds 7 and 8 held back the same memories: %s", first)
	}
}

// TestHelpfulFactor: a memory with nothing but bad answers sinks within a
// handful of recalls; one as good as the tenant's memories keeps its
// score; an origin whose memories keep misleading sinks the ones nobody
// judged yet; a measured negative impact halves the factor.
func TestHelpfulFactor(t *testing.T) {
	s := learning.NewScorer(learning.DefaultScoreConfig(), nil)
	all := engram.Helpfulness{Good: 60, Bad: 40}
	ev := func(own, origin engram.Helpfulness) engram.HelpEvidence {
		return engram.HelpEvidence{Memory: own, Origin: origin, Origins: all, Answers: all}
	}
	if f, o, _ := s.Helpful(ev(engram.Helpfulness{}, engram.Helpfulness{})); f != 1 || o != 1 {
		t.Errorf("no evidence: %v (origin %v), want 1", f, o)
	}
	if f, _, _ := s.Helpful(ev(engram.Helpfulness{Good: 12, Bad: 6}, engram.Helpfulness{Good: 60, Bad: 40})); f != 1 {
		t.Errorf("as good as the tenant's memories: %v, want 1", f)
	}
	prev := 1.0
	for n := 1; n <= 5; n++ {
		bad := engram.Helpfulness{Bad: float64(n)}
		f, _, _ := s.Helpful(ev(bad, bad)) // the only memory of its origin
		if !(f < prev) {
			t.Errorf("%d bad answers: %v, not below %v", n, f, prev)
		}
		prev = f
	}
	if !(prev < 0.2) {
		t.Errorf("five bad answers leave the factor at %v", prev)
	}
	// Luck is not a record: three bad answers where most answers are bad
	// leave a memory alone; where most answers go well, four sink it and
	// six sink it below 0.7.
	mostlyBad := engram.Helpfulness{Good: 35, Bad: 65}
	if f, _, _ := s.Helpful(engram.HelpEvidence{Memory: engram.Helpfulness{Bad: 3}, Origin: mostlyBad, Origins: mostlyBad,
		Main: mostlyBad, Answers: mostlyBad}); f != 1 {
		t.Errorf("three bad answers where most are bad: %v, want 1", f)
	}
	if f, _, _ := s.Helpful(ev(engram.Helpfulness{Bad: 4}, all)); !(f < 0.85) {
		t.Errorf("four bad answers where most are good: %v, want below 0.85", f)
	}
	if f, _, _ := s.Helpful(ev(engram.Helpfulness{Bad: 6}, all)); !(f < 0.7) {
		t.Errorf("six bad answers where most are good: %v, want below 0.7", f)
	}
	// A memory nobody judged, of an origin whose memories mislead.
	f, o, _ := s.Helpful(ev(engram.Helpfulness{}, engram.Helpfulness{Good: 10, Bad: 40}))
	if !(f < 0.2) || f != o {
		t.Errorf("unjudged memory of a misleading origin: %v (origin %v), want below 0.2, all of it the origin's", f, o)
	}
	// One origin's few memories prove little.
	if f, _, _ := s.Helpful(ev(engram.Helpfulness{}, engram.Helpfulness{Bad: 1})); !(f > 0.6) {
		t.Errorf("an origin with one bad answer: %v, want above 0.6", f)
	}
	h := engram.Helpfulness{Good: 3, Bad: 3, With: engram.Outcomes{N: 6, Sum: -6, Sq: 6}, Without: engram.Outcomes{N: 4, Sum: 4, Sq: 4}}
	plain, _, _ := s.Helpful(ev(engram.Helpfulness{Good: 3, Bad: 3}, all))
	f, _, effect := s.Helpful(ev(h, all))
	if effect == nil || *effect != -2 || f != plain/2 {
		t.Errorf("negative impact: factor %v effect %v, want %v and -2", f, effect, plain/2)
	}
}

// TestEvidenceAttribution: a good answer is credited to the memories that
// have been helpful, not to one riding along with them, and a memory's own
// share of it fades with its rank; a bad one counts in full against all
// (none of them answered).
func TestEvidenceAttribution(t *testing.T) {
	f := learning.NewFeedback(nil, learning.NewScorer(learning.DefaultScoreConfig(), nil), engram.DefaultFeedbackConfig())
	all := engram.Helpfulness{Good: 50, Bad: 50}
	judged := []engram.Judged{
		{Rank: 0, HelpEvidence: engram.HelpEvidence{Memory: engram.Helpfulness{Bad: 12}, Origins: all}},          // rides along
		{Rank: 1, HelpEvidence: engram.HelpEvidence{Memory: engram.Helpfulness{Good: 10, Bad: 1}, Origins: all}}, // answers
	}
	up := f.Evidence(1, judged)
	if !(up[0].Origin < 0.5 && up[1].Origin == 1) || up[1].Memory != 0.2 {
		t.Errorf("good answer credited %+v, want the helpful memory 1 (its own 1 / (1 + 4·rank) = 0.2) and the other under 0.5", up)
	}
	down := f.Evidence(-1, judged)
	for i, e := range down {
		if e.Origin != 1 || e.Memory != 1 {
			t.Errorf("bad answer, rank %d: %+v, want 1 against the memory and its origin", i, e)
		}
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
	judged := func(corrected bool, hs ...engram.Helpfulness) []engram.Judged {
		out := make([]engram.Judged, len(hs))
		for i, h := range hs {
			out[i] = engram.Judged{Rank: i, Corrected: corrected, HelpEvidence: engram.HelpEvidence{Memory: h, Answers: base}}
		}
		return out
	}
	bad := judged(false, engram.Helpfulness{Bad: 6}, engram.Helpfulness{Bad: 4, Good: 1})
	if a := f.Agreement(1, bad); !(a < -0.5) {
		t.Errorf("thumb up on memories others judged bad: agreement %v", a)
	}
	if a := f.Agreement(-1, bad); !(a > 0.5) {
		t.Errorf("thumb down on them: agreement %v", a)
	}
	if a := f.Agreement(1, judged(false, engram.Helpfulness{})); a != 0 {
		t.Errorf("nothing known: agreement %v", a)
	}
	// A correction superseded the memory: voting it up disagrees with
	// the user who corrected it, voting it down agrees.
	if a := f.Agreement(1, judged(true, engram.Helpfulness{})); !(a < -0.5) {
		t.Errorf("thumb up on a corrected memory: agreement %v", a)
	}
	if a := f.Agreement(-1, judged(true, engram.Helpfulness{})); !(a > 0.5) {
		t.Errorf("thumb down on a corrected memory: agreement %v", a)
	}
}

// TestMainOriginReference: origins are compared with the tenant's main
// origin, not with the pool of all. Notes of another origin that ride
// along with the main origin's good answers lift the pool's share above
// the main origin's own; the main origin keeps its factor of 1, the
// riders are not promoted past 1, and an origin worse than the main one
// still sinks.
func TestMainOriginReference(t *testing.T) {
	s := learning.NewScorer(learning.DefaultScoreConfig(), nil)
	turns := engram.Helpfulness{Good: 80, Bad: 200}
	riders := engram.Helpfulness{Good: 40, Bad: 20}
	stuffed := engram.Helpfulness{Good: 5, Bad: 60}
	pool := engram.Helpfulness{Good: turns.Good + riders.Good + stuffed.Good, Bad: turns.Bad + riders.Bad + stuffed.Bad}
	ev := func(origin engram.Helpfulness) engram.HelpEvidence {
		return engram.HelpEvidence{Origin: origin, Origins: pool, Main: turns, Answers: pool}
	}
	if f, o, _ := s.Helpful(ev(turns)); f != 1 || o != 1 {
		t.Errorf("the main origin, below the pool's share: %v (origin %v), want 1", f, o)
	}
	if f, _, _ := s.Helpful(ev(riders)); f != 1 {
		t.Errorf("riders: %v, want 1", f)
	}
	if f, _, _ := s.Helpful(ev(stuffed)); !(f < 0.2) {
		t.Errorf("an origin worse than the main one: %v, want below 0.2", f)
	}
	// Before any origin is judged the reference is the pool.
	noMain := engram.HelpEvidence{Origin: engram.Helpfulness{Bad: 1}, Origins: engram.Helpfulness{Good: 60, Bad: 40}}
	if f, _, _ := s.Helpful(noMain); !(f > 0.6 && f < 1) {
		t.Errorf("one bad answer, no main origin: %v, want in (0.6, 1)", f)
	}
}
