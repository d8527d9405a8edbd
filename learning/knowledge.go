package learning

import (
	"slices"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// updateOverlap is the share of two memories' content terms (common terms
// over all their terms) that a knowledge update asks of two memories of
// one subject read from their text (see subject.go). A restatement, or
// the same sentence with one detail changed, shares most of its words;
// two turns on one topic do not. It was the whole rule before subjects
// were read; kept, the subject reading only narrows it (LoCoMo's recall
// did not move, see README).
const updateOverlap = 0.6

// updateTop is how many of a recall's best-scored candidates a knowledge
// update compares, pair by pair.
const updateTop = 20

// supersede is the knowledge update of a recall (DESIGN §3): of two
// candidates written the same way (one origin: the same agent, source and
// type; see engram.Memory.Origin) in one category about one subject (one
// entity and one attribute of it, see subject.go; for the text reading
// also updateOverlap of their terms), the newer wins without any
// feedback. The older's score is multiplied by the scorer's superseded
// factor and its breakdown names the newer (superseded_by) and the
// subject read (subject). Newer is the later occurred_at when both have
// one, else the later created_at; two memories of the same instant (one
// batch without occurred_at) supersede neither.
//
// What is never compared: P0 memories (identity outranks recency) and
// memories of different origins — another writer contradicting a memory
// is a conflict for feedback to settle, not an update (an extractor's
// near-copy of a user's words must not override them by being later).
// Keyed memories are compared with the memories under the same parent
// key (the same entity); writing one key again already replaces it.
func (r *Recaller) supersede(cands []Candidate) {
	factor := r.scorer.cfg.SupersededFactor
	if factor >= 1 || len(cands) < 2 {
		return
	}
	// The best-scored candidates only: an update matters where it changes
	// what is injected, and comparing every pair of a long list costs.
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(cands[b].Breakdown.Score, cands[a].Breakdown.Score) })
	type subject struct {
		i      int
		origin string
		read   *reading
		terms  []uint64
	}
	subjects := make([]subject, 0, updateTop)
	for _, i := range order[:min(len(order), updateTop)] {
		m := cands[i].Memory
		if m.Priority == engram.P0 {
			continue
		}
		subjects = append(subjects, subject{i: i, origin: m.Category + "\x1f" + m.Origin()})
	}
	for a := range subjects {
		for b := a + 1; b < len(subjects); b++ {
			if subjects[a].origin != subjects[b].origin {
				continue
			}
			x, y := &subjects[a], &subjects[b]
			for _, s := range []*subject{x, y} {
				if s.read == nil {
					m := cands[s.i].Memory
					rd := read(m)
					s.read, s.terms = &rd, termSet(m.Content+" "+rd.parent)
				}
			}
			name, same := sameSubject(x.read, y.read)
			if !same || x.read.client == "" && !overlaps(x.terms, y.terms) {
				continue
			}
			switch recency(cands[x.i].Memory, cands[y.i].Memory) {
			case -1:
				markSuperseded(&cands[x.i], cands[y.i].Memory, name, factor)
			case 1:
				markSuperseded(&cands[y.i], cands[x.i].Memory, name, factor)
			}
		}
	}
}

// markSuperseded demotes c once, however many newer memories supersede
// it, and names the first of them found and the subject they share.
func markSuperseded(c *Candidate, by *engram.Memory, subject string, factor float64) {
	b := &c.Breakdown
	if b.SupersededBy != "" {
		return
	}
	b.Superseded, b.SupersededBy, b.Subject = factor, by.ID, subject
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

// termSet is the set of text's index terms as sorted 64-bit hashes
// (FNV-1a), never empty (an empty text is one empty term).
func termSet(text string) []uint64 {
	terms := analysis.Terms(text)
	out := make([]uint64, 0, len(terms)+1)
	for _, t := range terms {
		h := uint64(14695981039346656037)
		for i := 0; i < len(t); i++ {
			h = (h ^ uint64(t[i])) * 1099511628211
		}
		out = append(out, h)
	}
	if len(out) == 0 {
		out = append(out, 0)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// overlaps reports whether two term sets (see termSet) share at least
// updateOverlap of their union.
func overlaps(a, b []uint64) bool {
	small, large := min(len(a), len(b)), max(len(a), len(b))
	if float64(small) < updateOverlap*float64(large) {
		return false // even all of the smaller shared is too little
	}
	shared := sharedTerms(a, b)
	return float64(shared) >= updateOverlap*float64(len(a)+len(b)-shared)
}

// sharedTerms counts the terms two sorted term sets (see termSet) have in
// common.
func sharedTerms(a, b []uint64) int {
	shared := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			shared++
			i++
			j++
		}
	}
	return shared
}
