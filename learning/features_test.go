package learning

import (
	"math"
	"testing"

	"github.com/engram-memory/engram"
)

// TestFeatureRegularised: the feature model is bounded by its prior. A
// kind seen in a handful of bad answers, or one whose thousands of good
// answers outweigh a few hundred bad ones, leaves its memories alone; a
// kind that keeps turning up in bad answers sinks them, and is named with
// a negative weight; a rater-weighted trickle of evidence moves less than
// the same thumbs at full weight.
func TestFeatureRegularised(t *testing.T) {
	s := newTestScorer(t)
	pool := engram.Helpfulness{Good: 3000, Bad: 1000}
	list := engram.FeaturePrefix + "shape=list"
	factor := func(h engram.Helpfulness) (float64, []engram.FeatureWeight) {
		return s.Features(engram.HelpEvidence{Kinds: pool, Features: map[string]engram.Helpfulness{
			list: h, engram.FeaturePrefix + "type=note": {Good: 750, Bad: 250}}})
	}
	if f, top := factor(engram.Helpfulness{Bad: 5}); f < 0.9 {
		t.Errorf("5 bad answers: factor %.3f (%+v), want ≥ 0.9", f, top)
	}
	if f, top := factor(engram.Helpfulness{Good: 2000, Bad: 650}); f != 1 {
		t.Errorf("2000 good, 650 bad: factor %.3f (%+v), want 1", f, top)
	}
	f, top := factor(engram.Helpfulness{Good: 20, Bad: 80})
	if f > 0.5 || len(top) != 1 || top[0].Feature != list || top[0].Weight >= 0 {
		t.Errorf("20 good, 80 bad: factor %.3f, top %+v; want < 0.5 and the list shape named, negative", f, top)
	}
	weak, _ := factor(engram.Helpfulness{Good: 20 * 0.3, Bad: 80 * 0.3})
	if weak <= f {
		t.Errorf("the same thumbs at a third of the weight: factor %.3f, want above %.3f", weak, f)
	}
	if f, top := s.Features(engram.HelpEvidence{}); f != 1 || top != nil {
		t.Errorf("no evidence: %.3f %+v, want 1 and nothing named", f, top)
	}
}

// TestFeatureTrustForgivesHalf: a memory's most trusted kind forgives
// only TrustShare of its most distrusted kind's weight, so a keyword bag
// of a length the good memories share still sinks, less than one of an
// untrusted length.
func TestFeatureTrustForgivesHalf(t *testing.T) {
	s := newTestScorer(t)
	pool := engram.Helpfulness{Good: 3000, Bad: 1000}
	bag := engram.FeaturePrefix + "stop=none"
	trusted := engram.FeaturePrefix + "len=medium"
	alone, _ := s.Features(engram.HelpEvidence{Kinds: pool, Features: map[string]engram.Helpfulness{bag: {Good: 20, Bad: 80}}})
	both, top := s.Features(engram.HelpEvidence{Kinds: pool, Features: map[string]engram.Helpfulness{
		bag: {Good: 20, Bad: 80}, trusted: {Good: 950, Bad: 50}}})
	var d, u float64
	for _, w := range top {
		switch w.Feature {
		case bag:
			d = w.Weight
		case trusted:
			u = w.Weight
		}
	}
	if d >= 0 || u <= 0 {
		t.Fatalf("top %+v: want the bag distrusted and the length trusted", top)
	}
	if want := math.Exp(d + u/2); math.Abs(both-want) > 1e-9 || both >= 1 || both <= alone {
		t.Errorf("bag of a trusted length: factor %.4f, want %.4f (distrust %.3f + half of trust %.3f), under 1 and above the bag alone %.4f",
			both, want, d, u, alone)
	}
}
