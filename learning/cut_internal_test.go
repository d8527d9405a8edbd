package learning

import (
	"slices"
	"testing"

	"github.com/engram-memory/engram"
)

// TestCutWeighsScoreByMatch: the cut compares score times match with the
// recall's best, so a memory that covers the question as well as the best
// one stays though it ranks far lower, and one that ranks high on little
// of the question goes, though its score alone would clear the ratio.
func TestCutWeighsScoreByMatch(t *testing.T) {
	cand := func(id string, score, match float64) Candidate {
		return Candidate{Memory: &engram.Memory{ID: id}, Breakdown: engram.ScoreBreakdown{Score: score, Match: match}}
	}
	cands := []Candidate{
		cand("best", 1, 0.8),
		cand("covers", 0.2, 0.8),      // 0.16 of the best's 0.8: in
		cand("one_word", 0.3, 0.25),   // 0.075, below 0.115 × 0.8: out
		cand("below_floor", 0.9, 0.2), // ranks high, matches too little
	}
	inject, left := cut(cands, false, false)
	var in, out []string
	for _, c := range inject {
		in = append(in, c.Memory.ID)
	}
	for _, c := range left {
		out = append(out, c.Memory.ID)
		if c.Breakdown.Cut != cutBelow {
			t.Errorf("%s left out as %q, want %q", c.Memory.ID, c.Breakdown.Cut, cutBelow)
		}
	}
	if !slices.Equal(in, []string{"best", "covers"}) || !slices.Equal(out, []string{"one_word", "below_floor"}) {
		t.Errorf("injected %v, left out %v; want [best covers], [one_word below_floor]", in, out)
	}
}
