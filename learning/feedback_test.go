package learning

import (
	"math"
	"testing"

	"github.com/engram-memory/engram"
)

// The pair and share rules of DESIGN §4, which the store applies inside
// a feedback's transaction.
func TestFeedbackPolicy(t *testing.T) {
	f := NewFeedback(nil, NewScorer(DefaultScoreConfig(), nil), engram.DefaultFeedbackConfig())
	thumb := func(s float64) engram.Judgement { return engram.Judgement{Signal: s} }
	stars := func(r int) engram.Judgement { return engram.Judgement{Signal: float64(r-3) / 2, Rating: true} }
	for _, tt := range []struct {
		name     string
		a, b     engram.Judgement
		kind     string
		margin   float64
		wantPair bool
	}{
		{"up against down", thumb(1), thumb(-1), engram.PairRegeneration, 2, true},
		{"two ups", thumb(1), thumb(1), "", 0, false},
		{"ratings two stars apart", stars(5), stars(3), engram.PairRating, 1, true},
		{"ratings one star apart", stars(4), stars(3), "", 0, false},
		{"a thumb against a rating", thumb(-1), stars(3), engram.PairRegeneration, 1, true},
		{"down against a 2-star rating", thumb(-1), stars(2), "", 0, false},
	} {
		kind, margin, ok := f.Pair(tt.a, tt.b)
		if ok != tt.wantPair || kind != tt.kind || math.Abs(margin-tt.margin) > 1e-12 {
			t.Errorf("%s: Pair = %q %v %v, want %q %v %v", tt.name, kind, margin, ok, tt.kind, tt.margin, tt.wantPair)
		}
		if k2, m2, ok2 := f.Pair(tt.b, tt.a); k2 != kind || m2 != margin || ok2 != ok {
			t.Errorf("%s: Pair is not symmetric", tt.name)
		}
	}
	if got := f.CorrectionMargin(-1); got != 2 {
		t.Errorf("correction of a thumb down: margin %v, want 2", got)
	}
	if got := f.CorrectionMargin(1); got != 1 {
		t.Errorf("correction of a thumb up: margin %v, want 1", got)
	}
	shares := f.Shares(map[string]float64{"a": 0.8, "b": 0.4, "c": 0})
	if shares["a"] != 1 || shares["b"] != 0.5 || len(shares) != 2 {
		t.Errorf("shares = %v, want a 1, b 0.5, c none", shares)
	}
	if got := f.Shares(map[string]float64{"a": 0}); len(got) != 0 {
		t.Errorf("shares of zero scores = %v, want none", got)
	}
	if n, w := f.RaterLimit(); n != 3 || w.Hours() != 24 {
		t.Errorf("rater limit = %d per %v", n, w)
	}
}
