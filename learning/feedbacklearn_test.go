package learning

import (
	"math"
	"testing"

	"github.com/engram-memory/engram"
)

// TestLearn: what one judged recall adds, by hand. A bad answer by a new
// rater (weight 1) that injected a (first) and b (second), one origin,
// each with its own feature and a shared one: each memory and the origin
// take 1 bad, the features 1 / (1 + rank / KindHalf) (1 and 2/3), the
// tenant-wide keys the sums, the answers 1 bad (nothing held back). With KindHalf 1 the second memory's kinds take 1/2.
// A memory the rater's cap left alone takes nothing.
func TestLearn(t *testing.T) {
	judged := []JudgedMemory{
		{ID: "mem_a", Origin: "origin:x", Features: []string{"feature:shape=list", "feature:type=note"}},
		{ID: "mem_b", Origin: "origin:x", Features: []string{"feature:shape=sentence", "feature:type=note"}},
	}
	for _, tc := range []struct {
		kindHalf, second float64
	}{{2, 2.0 / 3}, {1, 0.5}} {
		p := DefaultPolicy()
		p.KindHalf = tc.kindHalf
		f := NewFeedback(nil, newTestScorer(t).WithPolicy(p), engram.FeedbackConfig{})
		deltas, rep := f.Learn(engram.Reputation{}, -1, judged, Arms{})
		want := map[string]float64{
			"mem_a": 1, "mem_b": 1, "origin:x": 2, engram.AllOrigins: 2, engram.AnswersKey: 1,
			"feature:shape=list": 1, "feature:shape=sentence": tc.second, "feature:type=note": 1 + tc.second,
			engram.AllFeatures: 1 + tc.second,
		}
		for k, bad := range want {
			if d := deltas[k]; d.Good != 0 || math.Abs(d.Bad-bad) > 1e-12 {
				t.Errorf("kind half %v: %q adds %+v; want bad %v", tc.kindHalf, k, d, bad)
			}
		}
		if len(deltas) != len(want) {
			t.Errorf("kind half %v: %d keys, want %d: %+v", tc.kindHalf, len(deltas), len(want), deltas)
		}
		if rep.Votes != 1 || rep.Agree != 0 || rep.Disagree != 0 {
			t.Errorf("reputation %+v; want one vote, nothing known to agree with", rep)
		}
	}
	// The rater's cap reached for b: b, and its kinds through b, take
	// nothing; a keeps its full share, the answer still counts.
	capped := append([]JudgedMemory(nil), judged...)
	capped[1].Capped = true
	deltas, _ := NewFeedback(nil, newTestScorer(t), engram.FeedbackConfig{}).Learn(engram.Reputation{}, -1, capped, Arms{})
	want := map[string]float64{"mem_a": 1, "origin:x": 1, engram.AllOrigins: 1, engram.AnswersKey: 1,
		"feature:shape=list": 1, "feature:type=note": 1, engram.AllFeatures: 1}
	for k, bad := range want {
		if d := deltas[k]; d.Good != 0 || math.Abs(d.Bad-bad) > 1e-12 {
			t.Errorf("capped b: %q adds %+v; want bad %v", k, d, bad)
		}
	}
	if len(deltas) != len(want) {
		t.Errorf("capped b: %d keys, want %d: %+v", len(deltas), len(want), deltas)
	}
}
