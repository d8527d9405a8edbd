package learning

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/engram-memory/engram"
)

// exploreTop is how many of a recall's best-scored injected memories
// exploration chooses from.
const exploreTop = 3

// WithExplore makes a share p of recalls (learning.explore) hold back one
// of their best-scored memories, chosen at random, and record that they
// did: feedback on such recalls measures what answers are like without
// the memory (its impact, GET /v1/memories/{id}/impact).
func (r *Recaller) WithExplore(p float64) *Recaller {
	r.explore = p
	r.exploring = newSource()
	return r
}

// WithKindProbes makes a share p of the recalls that qualify
// (learning.explore_kinds) probe a distrusted kind: a recall qualifies
// when a candidate whose feature factor is under probeBelow would be one
// of its exploreTop best without that factor. A probing recall lets the
// candidate in with that score (ScoreBreakdown.Explored) or leaves it
// where the model ranks it (Recall.Probe, the control arm), at even
// odds, and feedback on it counts in the candidate's features' impact
// arms (with, without; see learningTx.finish). The learned model can be
// wrong about a kind: a hostile rater's streak before any consensus, or
// a kind ranked out of the answers that would have shown it good, leaves
// true memories under a factor no feedback can lift, since they are
// never injected again. A kind whose measured impact is positive is not
// distrusted (see Scorer.Features).
func (r *Recaller) WithKindProbes(p float64) *Recaller {
	r.probe = p
	r.probing = newSource()
	return r
}

// newSource is a random source for exploration or kind probes, each its
// own, so that turning one on leaves the other's draws as they were.
func newSource() *exploreSource {
	return &exploreSource{rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

// probeBelow is the feature factor under which a candidate's kinds are
// distrusted enough to probe.
const probeBelow = 0.5

// probeKinds decides whether this recall probes a distrusted kind (see
// WithKindProbes), and ranks the candidate it chose in cands by the arm
// it draws: let in, at its score without the feature factor, or the
// control arm, at its score with the factor its kinds' evidence gives,
// returned as the item it is.
func (r *Recaller) probeKinds(cands []Candidate) *engram.RecallItem {
	if r.probe <= 0 {
		return nil
	}
	var scores []float64
	best, top := -1, 0.0
	for i, c := range cands {
		b := c.Breakdown
		if b.Pinned || reflection(c) {
			continue
		}
		scores = append(scores, b.Score)
		if c.unproven > 0 && c.unproven < probeBelow && b.FeatureFactor > 0 && b.Score/b.FeatureFactor > top {
			best, top = i, b.Score/b.FeatureFactor
		}
	}
	if best < 0 || len(scores) < 2 {
		return nil
	}
	slices.SortFunc(scores, func(a, b float64) int { return cmpFloat(b, a) })
	if top < scores[min(exploreTop, len(scores))-1] || !r.probing.explores(r.probe) {
		return nil
	}
	c := &cands[best]
	b := &c.Breakdown
	if r.probing.explores(0.5) {
		b.Score, b.Helpfulness, b.Explored = top, b.Helpfulness/b.FeatureFactor, true
		return nil
	}
	b.Score, b.Helpfulness, b.FeatureFactor = top*c.unproven, b.Helpfulness/b.FeatureFactor*c.unproven, c.unproven
	return &engram.RecallItem{ID: c.Memory.ID, Version: c.Memory.Version, Score: b.Score, Breakdown: *b}
}

// SeedExplore restarts the random sources of exploration and kind probes
// at seed, so that the same recalls in the same order hold back and probe
// the same memories (the learning benchmark seeds them per run, to make a
// run repeatable).
func (r *Recaller) SeedExplore(seed uint64) {
	r.exploring.seed(seed, 0x6578706c6f7265)
	r.probing.seed(seed, 0x70726f6265)
}

// seed restarts s at seed on stream, if s is in use.
func (s *exploreSource) seed(seed, stream uint64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.rng = rand.New(rand.NewPCG(seed, stream))
	s.mu.Unlock()
}

// exploreSource is exploration's random source, shared by concurrent
// recalls.
type exploreSource struct {
	mu  sync.Mutex
	rng *rand.Rand
}

// explores reports whether a recall explores, with probability p.
func (s *exploreSource) explores(p float64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64() < p
}

// pick returns which of n eligible memories an exploring recall holds
// back.
func (s *exploreSource) pick(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.IntN(n)
}

// holdBack decides whether this recall explores and, if so, returns the
// held-back memory as the item it would have been and the candidates
// without it. P0 memories, reflections and a memory whose key the query
// names exactly are never held back.
func (r *Recaller) holdBack(query string, cands []Candidate, items []engram.RecallItem) (*engram.RecallItem, []Candidate) {
	if r.explore <= 0 || len(items) < 2 || !r.exploring.explores(r.explore) {
		return nil, cands
	}
	byID := make(map[string]*engram.Memory, len(cands))
	for _, c := range cands {
		byID[c.Memory.ID] = c.Memory
	}
	eligible := make([]engram.RecallItem, 0, len(items))
	for _, it := range items {
		m := byID[it.ID]
		if m == nil || it.Breakdown.Explored || m.Priority == engram.P0 || strings.HasPrefix(it.ID, "refl_") || (m.Key != "" && strings.Contains(query, m.Key)) {
			continue
		}
		eligible = append(eligible, it)
	}
	if len(eligible) == 0 {
		return nil, cands
	}
	slices.SortStableFunc(eligible, func(a, b engram.RecallItem) int { return cmpFloat(b.Score, a.Score) })
	held := eligible[r.exploring.pick(min(exploreTop, len(eligible)))]
	kept := make([]Candidate, 0, len(cands)-1)
	for _, c := range cands {
		if c.Memory.ID != held.ID {
			kept = append(kept, c)
		}
	}
	return &held, kept
}

// helpful multiplies each candidate's score by its helpfulness, read from
// the store for every candidate at once (see Scorer.Helpful).
func (r *Recaller) helpful(ctx context.Context, cands []Candidate) error {
	if len(cands) == 0 {
		return nil
	}
	mems := make([]*engram.Memory, len(cands))
	for i, c := range cands {
		mems[i] = c.Memory
	}
	help, err := r.store.FindHelpfulness(ctx, mems)
	if err != nil {
		return err
	}
	for i := range cands {
		e, ok := help[cands[i].Memory.ID]
		if !ok {
			continue
		}
		b := &cands[i].Breakdown
		b.Helpfulness, b.OriginFactor, b.Impact = r.scorer.Helpful(e)
		b.FeatureFactor, cands[i].unproven, b.Features = r.scorer.features(e)
		b.HelpGood, b.HelpBad = e.Memory.Good, e.Memory.Bad
		b.OriginGood, b.OriginBad = e.Origin.Good, e.Origin.Bad
		b.Score *= b.Helpfulness
	}
	return nil
}
