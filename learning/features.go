package learning

// The learned helpfulness model over kinds of memory: what judged answers
// say of each feature (engram.Memory.Features), and the factor it applies
// to every memory of that kind, judged or not.

import (
	"cmp"
	"context"
	"math"
	"slices"

	"github.com/engram-memory/engram"
)

// Constants of the feature model, fixed on the learning benchmark's
// tuning seeds (1 and 11–19, see docs/learning-model.md), never on a
// reported one. The tunable ones are DefaultPolicy's.
const (
	// topFeatures is how many features a breakdown names.
	topFeatures = 3
)

// Policy holds the constants of the learned helpfulness model that a
// policy variant changes (engram bench replay's flags); the service runs
// DefaultPolicy.
type Policy struct {
	// FeaturePrior is the weight, in judged recalls, of the tenant's rate
	// in a feature's estimate (the regularisation): a feature seen in a
	// handful of bad answers stays at the tenant's rate.
	FeaturePrior float64
	// FeatureZ is how many standard deviations of its estimate a
	// feature's rate must stand off the tenant's before it moves a
	// memory: a feature is distrusted only by as much as the upper end of
	// its credible interval falls short, and trusted by as much as the
	// lower end exceeds.
	FeatureZ float64
	// FeatureMin is the least evidence, in judged recalls (rank- and
	// rater-weighted), a feature needs before it moves any memory: a kind
	// seen in a handful of answers teaches nothing yet, however they went.
	FeatureMin float64
	// FeaturePower sharpens the feature factor, (rate / tenant's)^power,
	// as OriginPower does the origin's.
	FeaturePower float64
	// KindHalf is the rank at which a bad answer's evidence against a
	// memory's kinds halves (the damping of riders): the memory put first
	// in an answer that went wrong misled it most, one far down mostly
	// rode along.
	KindHalf float64
	// BeliefPower sharpens kindBelief.
	BeliefPower float64
	// OriginPower sharpens an origin's demotion, (rate / tenant's)^power:
	// an origin's estimate rests on every recall any of its memories was
	// in, so a steady shortfall is trusted more than one memory's.
	OriginPower float64
	// TrustShare is how much of a memory's most trusted feature's weight
	// forgives its most distrusted one's (see Scorer.Features): at 1 a
	// keyword list of a trusted length or category kept its place.
	TrustShare float64
	// DistrustShare is how much of a memory's other distrusted features'
	// weights adds to its most distrusted one's (see Scorer.Features): at
	// 0 only the most distrusted counts, at 1 all do.
	DistrustShare float64
	// KindImpactMin is the fewest judged recalls in each of a feature's
	// impact arms before kind probes' measure of it is heeded (see helps):
	// a tenant has tens of features, probes look at them after every
	// answer, and a few answers split by luck would trust a kind that
	// misleads.
	KindImpactMin int64
}

// DefaultPolicy is the policy the service runs.
func DefaultPolicy() Policy {
	return Policy{FeaturePrior: 10, FeatureZ: 0.5, FeatureMin: 12, FeaturePower: 4, KindHalf: 2, BeliefPower: 8, OriginPower: 6, TrustShare: 0, DistrustShare: 1, KindImpactMin: 10}
}

// WithPolicy returns a copy of the Scorer that runs p.
func (s *Scorer) WithPolicy(p Policy) *Scorer {
	c := *s
	c.policy = p
	return &c
}

// Features returns the feature factor of a memory with evidence e, in
// [0, 1], and the features that moved it (at most topFeatures, largest
// weight first). Each feature's good-rate is shrunk towards the tenant's
// (FeaturePrior) and compared with it through its credible interval
// (FeatureZ): a feature whose whole interval lies below the tenant's rate
// is distrusted by log(upper / tenant's), one whose interval lies above
// is trusted by log(lower / tenant's), others weigh 0. A memory sinks
// by its most distrusted kind's weight plus DistrustShare of its other
// distrusted kinds', forgiven by TrustShare of its most trusted kind's;
// the factor is e^(power · (distrust + share · trust)), capped at 1. The
// service sums every distrusted kind and forgives none (DistrustShare 1,
// TrustShare 0), as chosen on the learning benchmark's tuning seeds (see
// docs/learning-model.md): a keyword bag that is also a list with a
// distrusted lead word is worse than a bag alone, and the credible
// interval and FeatureMin, not the minimum, keep a handful of answers
// from sinking anything.
// A feature's evidence is scaled by each rater's weight when it is added
// (see learningTx.credited), so a hostile rater moves it less.
func (s *Scorer) Features(e engram.HelpEvidence) (float64, []engram.FeatureWeight) {
	f, _, ws := s.features(e)
	return f, ws
}

// Unproven is the feature factor a memory's kinds' evidence gives when
// no measured impact (see helps) is heeded: what kind probes test (see
// Recaller.WithKindProbes).
func (s *Scorer) Unproven(e engram.HelpEvidence) float64 {
	_, f, _ := s.features(e)
	return f
}

// features returns Features' factor and weights, and Unproven's factor,
// in one pass.
func (s *Scorer) features(e engram.HelpEvidence) (heeded, unproven float64, ws []engram.FeatureWeight) {
	if len(e.Features) == 0 {
		return 1, 1, nil
	}
	pool := kindPool(e)
	var on, off kindSum // heeding measured impacts, and not
	for f, h := range e.Features {
		w := s.policy.featureWeight(h, pool)
		off.add(w)
		if w < 0 && s.policy.helps(h) {
			w = 0
		}
		on.add(w)
		if w != 0 {
			ws = append(ws, engram.FeatureWeight{Feature: f, Weight: s.policy.FeaturePower * w, Good: h.Good, Bad: h.Bad})
		}
	}
	slices.SortFunc(ws, func(a, b engram.FeatureWeight) int {
		if c := cmp.Compare(math.Abs(b.Weight), math.Abs(a.Weight)); c != 0 {
			return c
		}
		return cmp.Compare(a.Feature, b.Feature)
	})
	return on.factor(s.policy), off.factor(s.policy), ws[:min(len(ws), topFeatures)]
}

// kindSum gathers a memory's feature weights for its factor: the most
// distrusted and most trusted, and the sum of the distrusted.
type kindSum struct{ distrust, trust, against float64 }

func (k *kindSum) add(w float64) {
	k.distrust, k.trust = math.Min(k.distrust, w), math.Max(k.trust, w)
	k.against += math.Min(w, 0)
}

// factor is e^(power · (distrust + share · trust)), capped at 1, with
// DistrustShare of the other distrusted weights added to the most
// distrusted one's (see Scorer.Features).
func (k kindSum) factor(p Policy) float64 {
	d := k.distrust + p.DistrustShare*(k.against-k.distrust)
	return unit(math.Exp(p.FeaturePower * (d + p.TrustShare*k.trust)))
}

// featureWeight is the log factor of a feature of evidence h in a tenant
// whose memories' good-rate is pool (see Scorer.Features).
func (p Policy) featureWeight(h engram.Helpfulness, pool float64) float64 {
	n := h.Good + h.Bad
	if n < p.FeatureMin || pool <= 0 {
		return 0
	}
	m := (h.Good + p.FeaturePrior*pool) / (n + p.FeaturePrior)
	sd := math.Sqrt(math.Max(m*(1-m), 0) / (n + p.FeaturePrior + 1))
	switch {
	case m+p.FeatureZ*sd < pool:
		return math.Log(math.Max(m+p.FeatureZ*sd, 1e-9) / pool)
	case m-p.FeatureZ*sd > pool:
		return math.Log((m - p.FeatureZ*sd) / pool)
	}
	return 0
}

// kindBelief is what the feature model believes of a memory's kinds, for
// sharing out a good answer's credit (see Feedback.Evidence): the
// geometric mean over its features of each one's good-rate, shrunk
// towards the tenant's by FeaturePrior, over the tenant's. Unlike the
// feature factor it does not wait for a credible interval: it is the
// E step of an EM over the injected memories, so that a kind that keeps
// riding along with good answers it did not make good takes less of
// their credit each time, and the evidence separates the kinds.
func (p Policy) kindBelief(e engram.HelpEvidence) float64 {
	if len(e.Features) == 0 {
		return 1
	}
	pool := kindPool(e)
	sum := 0.0
	for _, h := range e.Features {
		if p.helps(h) {
			continue
		}
		sum += math.Log((h.Good + p.FeaturePrior*pool) / (h.Good + h.Bad + p.FeaturePrior) / pool)
	}
	return math.Exp(p.BeliefPower * sum / float64(len(e.Features)))
}

// helps reports whether a kind's measured impact is positive: answers
// where kind probes let a memory of the kind in (see
// Recaller.WithKindProbes) were better than those where they left it as
// the model ranked it, by the whole of the impact's 95% interval, with
// KindImpactMin judged recalls in each arm at least. What
// the kind's evidence says against it is then a wrong lesson (a hostile
// streak, or answers it was ranked out of), and it is neither distrusted
// nor denied its share of good answers.
func (p Policy) helps(h engram.Helpfulness) bool {
	_, lo, _, ok := impact(h, p.KindImpactMin)
	return ok && lo > 0
}

// kindPool is the good-rate of every judged memory's features
// (engram.AllFeatures), the reference of each feature's; before any, the
// good-rate of all memories' evidence.
func kindPool(e engram.HelpEvidence) float64 {
	if e.Kinds.Good+e.Kinds.Bad > 0 {
		return baseRate(e.Kinds)
	}
	return baseRate(e.Origins)
}

// learnedFeatures is how many features, those with the most evidence,
// LearnedFeatures weighs.
const learnedFeatures = 200

// LearnedFeatures returns what the tenant's feature model has learned:
// each of its features with the most evidence that moves memories, with
// its weight (the log factor it applies, see Scorer.Features), most
// distrusted first, most trusted last.
func (f *Feedback) LearnedFeatures(ctx context.Context) ([]engram.FeatureWeight, error) {
	ev, all, err := f.FeedbackStore.FindFeatureEvidence(ctx, learnedFeatures)
	if err != nil {
		return nil, err
	}
	pool := kindPool(engram.HelpEvidence{Kinds: all})
	var out []engram.FeatureWeight
	for k, h := range ev {
		if w := f.scorer.policy.featureWeight(h, pool); w != 0 {
			out = append(out, engram.FeatureWeight{Feature: k, Weight: f.scorer.policy.FeaturePower * w, Good: h.Good, Bad: h.Bad})
		}
	}
	slices.SortFunc(out, func(a, b engram.FeatureWeight) int {
		if c := cmp.Compare(a.Weight, b.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.Feature, b.Feature)
	})
	return out, nil
}
