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
	// A share is the score over the best, over 1 + rank / positionHalf;
	// ties share their rank.
	shares := f.Shares(map[string]float64{"a": 0.8, "b": 0.4, "c": 0})
	if shares["a"] != 1 || math.Abs(shares["b"]-0.5/5) > 1e-12 || len(shares) != 2 {
		t.Errorf("shares = %v, want a 1, b 0.1, c none", shares)
	}
	shares = f.Shares(map[string]float64{"a": 0.8, "b": 0.8, "c": 0.4})
	if shares["a"] != 1 || shares["b"] != 1 || math.Abs(shares["c"]-0.5/9) > 1e-12 {
		t.Errorf("shares with a tie at the top = %v, want a 1, b 1, c 0.5/9", shares)
	}
	if got := f.Shares(map[string]float64{"a": 0}); len(got) != 0 {
		t.Errorf("shares of zero scores = %v, want none", got)
	}
	if n, w := f.RaterLimit(); n != 3 || w.Hours() != 24 {
		t.Errorf("rater limit = %d per %v", n, w)
	}
}

// TestRevisionAgainstAnswers: needs_revision is set once down votes lead
// by the threshold (5), each read against the tenant's share of good
// answers, 2·(p·down − (1 − p)·up). Where no answer is judged (or half
// are good) that is down − up; where most answers are bad (p = 11/42), a
// memory injected into them needs ten down votes and is not flagged for
// the mix an ordinary memory collects there; where most are good
// (p = 31/42), down votes say more: four after an up vote.
func TestRevisionAgainstAnswers(t *testing.T) {
	f := NewFeedback(nil, NewScorer(DefaultScoreConfig(), nil), engram.DefaultFeedbackConfig())
	for _, tt := range []struct {
		name    string
		answers engram.Helpfulness
		thumbs  string // u up, d down, in order
		flagged int    // the vote that sets needs_revision, 1-based; 0 never
	}{
		{"no answers judged", engram.Helpfulness{}, "dddddd", 5},
		{"no answers judged, an up vote between", engram.Helpfulness{}, "ddudddd", 7},
		{"half the answers good", engram.Helpfulness{Good: 20, Bad: 20}, "dddddd", 5},
		{"a quarter good", engram.Helpfulness{Good: 10, Bad: 30}, "dddddddddddd", 10},
		{"a quarter good, ordinary mix", engram.Helpfulness{Good: 10, Bad: 30}, "dduddduddd", 0},
		{"most answers good", engram.Helpfulness{Good: 30, Bad: 10}, "uddddd", 5},
	} {
		m := &engram.Memory{Priority: engram.P2, Confidence: 0.5}
		got := 0
		for i, c := range tt.thumbs {
			s := -1.0
			if c == 'u' {
				s = 1
			}
			f.Credit(m, s, 1, "", tt.answers)
			if m.NeedsRevision && got == 0 {
				got = i + 1
			}
		}
		if got != tt.flagged {
			t.Errorf("%s: %s sets needs_revision at vote %d, want %d", tt.name, tt.thumbs, got, tt.flagged)
		}
	}
}
