package learning_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store/storetest"
)

// TestKindProbes: where the learned model sinks a memory's kind (keyword
// lists, taught by a hostile streak), a recall whose best candidate
// without that factor is such a memory probes it: it lets the memory in
// with its score before the factor (marked explored) or leaves it where
// the model ranks it and records it, at about even odds. Feedback on the probes lands in the
// kind's impact arms, in the store, so a second server on the same
// database reads it; once answers with the kind in are measured better
// than those without, the kind is no longer distrusted, and probes go on
// testing it against the ranking its evidence gives. A recall with no
// distrusted candidate, and every recall with probes off, probes nothing.
// Answers here are good with the note let in and bad without it.
func TestKindProbes(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		a, b := storetest.OpenWith(t, o), storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, a, "probes")
		stored := addMemories(t, a, ctx, append([]*engram.Memory{
			memory(engram.CategoryWork, "Keywords: deploy, rollback, approvals, freeze"),
			memory(engram.CategoryWork, "Deploy rollbacks need two approvals from the on-call team"),
			memory(engram.CategoryWork, "The deploy pipeline runs the smoke tests first")},
			fillers(engram.CategoryLife, 10)...)...)
		note := stored[0]
		list := engram.FeaturePrefix + "shape=list"
		seed := &engram.Recall{Query: "seed", TokenBudget: 100, Items: []engram.RecallItem{{ID: note.ID, Version: note.Version, Score: 0.5}}}
		if err := a.SaveRecall(ctx, seed, "", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := a.RunFeedback(ctx, seed.ID, "streak", func(ctx context.Context, tx engram.FeedbackTx) (*engram.FeedbackResult, error) {
			tx.AddLearning(map[string]engram.Helpfulness{list: {Bad: 40}, engram.AllFeatures: {Good: 100, Bad: 70}}, "streak", engram.Reputation{Votes: 1})
			return &engram.FeedbackResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		router := fixedRouter{[]string{engram.CategoryWork}}
		probing := newRecaller(t, a, router, engram.DefaultRecallConfig()).WithKindProbes(1)
		probing.SeedExplore(3)
		fb := learning.NewFeedback(a, learning.NewScorer(learning.DefaultScoreConfig(), nil), engram.DefaultFeedbackConfig())
		in, out := 0, 0
		for i := range 40 {
			rec := recall(t, probing, ctx, engram.RecallRequest{Query: "deploy rollback approvals freeze", TokenBudget: 500})
			it, at := findItem(rec.Items, note.ID)
			bd := it.Breakdown
			thumb := engram.ThumbUp
			switch {
			case at >= 0 && bd.Explored && rec.Probe == nil:
				in++
				want := bd.Relevance * bd.Reward * bd.Confidence * bd.Retention * bd.Revision * bd.Helpfulness * bd.Emotion
				if !(bd.FeatureFactor == 1 || bd.Helpfulness > bd.FeatureFactor) || math.Abs(it.Score-want) > 1e-9 {
					t.Fatalf("let in with score %v, helpfulness %v, feature factor %v; want the factor left out of both (score %v)", it.Score, bd.Helpfulness, bd.FeatureFactor, want)
				}
			case !bd.Explored && rec.Probe != nil && rec.Probe.ID == note.ID:
				out++
				thumb = engram.ThumbDown
				// The control arm ranks the note by its kinds' evidence,
				// also once their impact is measured positive.
				if f := rec.Probe.Breakdown.FeatureFactor; !(f < 0.5) {
					t.Fatalf("control arm with feature factor %v, want the evidence's, under 0.5", f)
				}
			default:
				t.Fatalf("recall %d did not probe the distrusted note: items %+v, probe %+v", i, rec.Items, rec.Probe)
			}
			if _, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: thumb, Rater: fmt.Sprint("rater", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if in < 10 || out < 10 {
			t.Fatalf("40 probes let the note in %d times and left it %d times: want ten in each arm", in, out)
		}
		ev, _, err := b.FindFeatureEvidence(ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		if h := ev[list]; h.With.N != int64(in) || h.With.Mean() != 1 || h.Without.N != int64(out) || h.Without.Mean() != -1 {
			t.Errorf("the list kind's arms read on the second server: with %+v, without %+v; want %d good and %d bad answers", h.With, h.Without, in, out)
		}
		plain := newRecaller(t, b, router, engram.DefaultRecallConfig())
		rec := recall(t, plain, ctx, engram.RecallRequest{Query: "deploy rollback approvals freeze", TokenBudget: 500})
		if it, at := findItem(rec.Items, note.ID); at < 0 || it.Breakdown.FeatureFactor != 1 || it.Breakdown.Explored || rec.Probe != nil {
			t.Errorf("after the probes, the note on the second server: %+v at %d (probe %+v); want it in, feature factor 1, not explored", it.Breakdown, at, rec.Probe)
		}
		for range 5 {
			rec := recall(t, probing, ctx, engram.RecallRequest{Query: "smoke tests pipeline", TokenBudget: 500})
			if rec.Probe != nil {
				t.Errorf("a recall with no distrusted candidate probed %s", rec.Probe.ID)
			}
			for _, it := range rec.Items {
				if it.Breakdown.Explored {
					t.Errorf("a recall with no distrusted candidate let %s in as explored", it.ID)
				}
			}
		}
	})
}

// TestKindImpact: a kind whose evidence sinks its memories is no longer
// distrusted once its measured impact is positive, by the whole of its
// interval, with ten answers in each arm; an impact that is negative,
// unsure or measured on fewer answers leaves it distrusted.
func TestKindImpact(t *testing.T) {
	s := learning.NewScorer(learning.DefaultScoreConfig(), nil)
	list := engram.FeaturePrefix + "shape=list"
	factor := func(h engram.Helpfulness) float64 {
		f, _ := s.Features(engram.HelpEvidence{Features: map[string]engram.Helpfulness{list: h}, Kinds: engram.Helpfulness{Good: 100, Bad: 70}})
		return f
	}
	bad := engram.Helpfulness{Bad: 40}
	sunk := factor(bad)
	if !(sunk < 0.5) {
		t.Fatalf("40 bad answers leave the kind at %v", sunk)
	}
	arm := func(n int64, mean float64) engram.Outcomes {
		return engram.Outcomes{N: n, Sum: float64(n) * mean, Sq: float64(n)}
	}
	for _, tc := range []struct {
		name          string
		with, without engram.Outcomes
		want          float64
	}{
		{"better with it", arm(12, 1), arm(12, -1), 1},
		{"worse with it", arm(12, -1), arm(12, 1), sunk},
		{"too few answers", arm(9, 1), arm(9, -1), sunk},
		{"no difference", arm(20, 0), arm(20, 0), sunk},
	} {
		h := bad
		h.With, h.Without = tc.with, tc.without
		if got := factor(h); got != tc.want {
			t.Errorf("%s: factor %v, want %v", tc.name, got, tc.want)
		}
	}
}
