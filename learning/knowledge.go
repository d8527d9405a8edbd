package learning

import (
	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// updateOverlap is the share of two memories' content terms (common terms
// over all their terms) from which they are about the same subject for a
// knowledge update. A restatement, or the same sentence with one detail
// changed, shares most of its words; two turns on one topic do not.
const updateOverlap = 0.6

// supersede is the knowledge update of a recall (DESIGN §3): of two
// candidates written the same way (one origin: the same agent, source and
// type; see engram.Memory.Origin) about the same subject (one category and
// updateOverlap of their content terms), the newer wins without any
// feedback. The older's
// score is multiplied by the scorer's superseded factor and its breakdown
// names the newer (superseded_by). Newer is the later occurred_at when
// both have one, else the later created_at; two memories of the same
// instant (one batch without occurred_at) supersede neither.
//
// What is never compared: P0 memories (identity outranks recency),
// memories with a key (writing a key again already replaces it) and
// memories of different origins — another writer contradicting a memory
// is a conflict for feedback to settle, not an update (an extractor's
// near-copy of a user's words must not override them by being later).
func (r *Recaller) supersede(cands []Candidate) {
	factor := r.scorer.cfg.SupersededFactor
	if factor >= 1 || len(cands) < 2 {
		return
	}
	type subject struct {
		i      int
		origin string
		terms  map[string]struct{}
	}
	var subjects []subject
	for i, c := range cands {
		m := c.Memory
		if m.Priority == engram.P0 || m.Key != "" {
			continue
		}
		terms := map[string]struct{}{}
		for _, t := range analysis.Terms(m.Content) {
			terms[t] = struct{}{}
		}
		if len(terms) > 0 {
			subjects = append(subjects, subject{i: i, origin: m.Category + "\x1f" + m.Origin(), terms: terms})
		}
	}
	for a := 0; a < len(subjects); a++ {
		for b := a + 1; b < len(subjects); b++ {
			x, y := subjects[a], subjects[b]
			if x.origin != y.origin || !sameSubject(x.terms, y.terms) {
				continue
			}
			switch recency(cands[x.i].Memory, cands[y.i].Memory) {
			case -1:
				markSuperseded(&cands[x.i], cands[y.i].Memory, factor)
			case 1:
				markSuperseded(&cands[y.i], cands[x.i].Memory, factor)
			}
		}
	}
}

// markSuperseded demotes c once, however many newer memories supersede
// it, and names the first of them found.
func markSuperseded(c *Candidate, by *engram.Memory, factor float64) {
	b := &c.Breakdown
	if b.SupersededBy != "" {
		return
	}
	b.Superseded, b.SupersededBy = factor, by.ID
	b.Score *= factor
}

// recency compares a and b by when what they record happened: +1 when a
// is newer, −1 when b is, 0 when neither is known to be (the same
// instant, e.g. two memories of one batch without occurred_at).
func recency(a, b *engram.Memory) int {
	if a.OccurredAt != nil && b.OccurredAt != nil {
		return a.OccurredAt.Compare(*b.OccurredAt)
	}
	return a.CreatedAt.Compare(b.CreatedAt)
}

// sameSubject reports whether two term sets share at least updateOverlap
// of their union.
func sameSubject(a, b map[string]struct{}) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	shared := 0
	for t := range a {
		if _, ok := b[t]; ok {
			shared++
		}
	}
	union := len(a) + len(b) - shared
	return float64(shared) >= updateOverlap*float64(union)
}
