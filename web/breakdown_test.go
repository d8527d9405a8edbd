package web

import (
	"math"
	"testing"

	"github.com/engram-memory/engram"
)

// TestBreakdownSpeaker: a memory the speaker-aware read damped shows the
// speaker factor, named in both languages, and the factors still multiply
// to its score; one it left alone shows no such row.
func TestBreakdownSpeaker(t *testing.T) {
	b := engram.ScoreBreakdown{Relevance: 2, Reward: 1.1, Confidence: 0.9, Retention: 0.8, Revision: 1,
		Superseded: 1, Emotion: 1.02, Helpfulness: 0.95, Speaker: 0.3}
	b.Score = 2 * 1.1 * 0.9 * 0.8 * 1.02 * 0.95 * 0.3
	for _, lang := range []string{"en", "zh"} {
		v := breakdownOf(&page{Lang: lang}, b)
		product, found := 1.0, false
		for _, f := range v.Factors {
			product *= f.Value
			if f.Key == "factor.speaker" {
				found = true
				if f.Note == "" || tr(lang, f.Key) == f.Key {
					t.Errorf("%s: the speaker row is not named or explained: %q, %q", lang, tr(lang, f.Key), f.Note)
				}
			}
		}
		if !found {
			t.Errorf("%s: no speaker row for a damped memory", lang)
		}
		if math.Abs(product-b.Score) > 1e-12 {
			t.Errorf("%s: factors multiply to %v, score %v", lang, product, b.Score)
		}
	}
	b.Speaker = 0
	for _, f := range breakdownOf(&page{Lang: "en"}, b).Factors {
		if f.Key == "factor.speaker" {
			t.Error("a memory the read left alone shows a speaker row")
		}
	}
}
