package learning

import (
	"context"
	"math"
	"sort"

	"github.com/engram-memory/engram"
)

// learningTx is what one feedback adds to the helpfulness evidence and to
// its rater's reputation; the store sums it with what the other feedbacks
// of its transaction add (FeedbackTx.AddLearning).
type learningTx struct {
	signal      float64
	raterWeight float64
	agreement   float64
	// answers is the tenant's judged answers before the feedback.
	answers engram.Helpfulness
	// evidence and origin are what the feedback adds to each judged
	// memory's evidence and under which origin key.
	evidence map[string]engram.Evidence
	origin   map[string]string
	// deltas is what the feedback adds, by memory id (origin keys and the
	// tenant-wide keys included).
	deltas map[string]engram.Helpfulness
}

// startLearning reads the rater's reputation (its weight for this
// feedback, RaterWeight) and the evidence known of the judged memories
// (mems, as LockMemories read them) and of their origins, measures the
// feedback's agreement with other raters' evidence (Agreement) and works
// out what it adds to each memory's (Evidence). The memories are judged
// best-scored first.
func (f *Feedback) startLearning(ctx context.Context, tx engram.FeedbackTx, rater string, signal float64, mems []*engram.Memory,
	scores map[string]float64) (*learningTx, error) {
	rep, err := tx.FindReputation(ctx, rater)
	if err != nil {
		return nil, err
	}
	ranked := append([]*engram.Memory(nil), mems...)
	sort.SliceStable(ranked, func(i, j int) bool {
		if scores[ranked[i].ID] != scores[ranked[j].ID] {
			return scores[ranked[i].ID] > scores[ranked[j].ID]
		}
		return ranked[i].ID < ranked[j].ID
	})
	l := &learningTx{signal: signal, raterWeight: f.RaterWeight(rep), evidence: make(map[string]engram.Evidence, len(ranked)),
		origin: make(map[string]string, len(ranked)), deltas: map[string]engram.Helpfulness{}}
	help, err := tx.FindHelpEvidence(ctx, ranked)
	if err != nil {
		return nil, err
	}
	judged := make([]engram.Judged, len(ranked))
	for i, m := range ranked {
		judged[i] = engram.Judged{Rank: i, Corrected: m.SupersededBy != "", HelpEvidence: help[m.ID]}
		l.answers = help[m.ID].Answers
		l.origin[m.ID] = m.Origin()
	}
	l.agreement = f.Agreement(signal, judged)
	for i, e := range f.Evidence(signal, judged) {
		l.evidence[ranked[i].ID] = e
	}
	return l, nil
}

// add changes the delta of key id by fn.
func (l *learningTx) add(id string, fn func(h *engram.Helpfulness)) {
	h := l.deltas[id]
	fn(&h)
	l.deltas[id] = h
}

// addEvidence adds e, scaled by the rater's weight, to the good or bad
// evidence of key id.
func (l *learningTx) addEvidence(id string, e float64) {
	l.add(id, func(h *engram.Helpfulness) {
		if l.signal > 0 {
			h.Good += e * l.raterWeight
		} else {
			h.Bad += e * l.raterWeight
		}
	})
}

// credited adds the feedback to the evidence of a memory it credited, of
// its origin and of all the tenant's memories.
func (l *learningTx) credited(id string) {
	e, ok := l.evidence[id]
	if !ok {
		return
	}
	l.addEvidence(id, e.Memory)
	l.add(id, func(h *engram.Helpfulness) { l.outcome(&h.With) })
	l.addEvidence(l.origin[id], e.Origin)
	l.addEvidence(engram.AllOrigins, e.Origin)
}

// outcome counts the signal in one arm of an impact estimate, unless the
// rater's weight is under a half (its votes do not count as outcomes).
func (l *learningTx) outcome(o *engram.Outcomes) {
	if l.raterWeight < 0.5 {
		return
	}
	o.N++
	o.Sum += l.signal
	o.Sq += l.signal * l.signal
}

// finish adds the held-back memory's outcome without it and what the
// feedback adds to the tenant-wide keys (all memories', and the judged
// answers' for a judged answer, not a vote on one memory).
func (l *learningTx) finish(heldBack string, answer bool) {
	if heldBack != "" {
		l.add(heldBack, func(h *engram.Helpfulness) { l.outcome(&h.Without) })
	}
	if answer {
		l.add(engram.AnswersKey, func(h *engram.Helpfulness) {
			w := math.Abs(l.signal) * l.raterWeight
			if l.signal > 0 {
				h.Good += w
			} else {
				h.Bad += w
			}
			l.outcome(&h.With)
		})
	}
}

// reputation is what the feedback adds to its rater's reputation: one
// vote, agreeing or disagreeing with the others' evidence by its
// agreement.
func (l *learningTx) reputation() engram.Reputation {
	return engram.Reputation{Agree: math.Max(l.agreement, 0), Disagree: math.Max(-l.agreement, 0), Votes: 1}
}
