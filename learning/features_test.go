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

// TestFeatureDistrustAdds: a memory sinks by the sum of its distrusted
// kinds' weights (Policy.DistrustShare 1), and a trusted kind does not
// forgive them (Policy.TrustShare 0): a keyword bag that is also a list
// sinks further than a bag alone, and a bag of a length the good memories
// share still sinks as far as a bag alone. A handful of bad answers on
// every one of a memory's kinds still moves nothing (the regularisation
// holds for the sum).
func TestFeatureDistrustAdds(t *testing.T) {
	s := newTestScorer(t)
	pool := engram.Helpfulness{Good: 3000, Bad: 1000}
	bag := engram.FeaturePrefix + "stop=none"
	list := engram.FeaturePrefix + "shape=list"
	trusted := engram.FeaturePrefix + "len=medium"
	features := func(fs map[string]engram.Helpfulness) (float64, map[string]float64) {
		f, top := s.Features(engram.HelpEvidence{Kinds: pool, Features: fs})
		w := map[string]float64{}
		for _, x := range top {
			w[x.Feature] = x.Weight
		}
		return f, w
	}
	alone, w := features(map[string]engram.Helpfulness{bag: {Good: 20, Bad: 80}})
	if w[bag] >= 0 || math.Abs(alone-math.Exp(w[bag])) > 1e-9 {
		t.Fatalf("bag alone: factor %.4f, weights %v; want e^(bag's weight) < 1", alone, w)
	}
	both, w := features(map[string]engram.Helpfulness{bag: {Good: 20, Bad: 80}, list: {Good: 30, Bad: 70}})
	if w[list] >= 0 || math.Abs(both-math.Exp(w[bag]+w[list])) > 1e-9 || both >= alone {
		t.Errorf("bag and list: factor %.4f, weights %v; want e^(sum of both weights), under the bag alone %.4f", both, w, alone)
	}
	withTrust, w := features(map[string]engram.Helpfulness{bag: {Good: 20, Bad: 80}, trusted: {Good: 950, Bad: 50}})
	if w[trusted] <= 0 || math.Abs(withTrust-alone) > 1e-9 {
		t.Errorf("bag of a trusted length: factor %.4f, weights %v; want the bag alone's %.4f (trust forgives nothing)", withTrust, w, alone)
	}
	few := map[string]engram.Helpfulness{}
	for _, f := range []string{bag, list, trusted, engram.FeaturePrefix + "lead1=keywords", engram.FeaturePrefix + "type=note"} {
		few[f] = engram.Helpfulness{Bad: 5}
	}
	if f, w := features(few); f != 1 {
		t.Errorf("5 bad answers on each of five kinds: factor %.4f, weights %v; want 1", f, w)
	}
}
