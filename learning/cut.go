package learning

import (
	"slices"

	"github.com/engram-memory/engram"
)

// The relevance cut (DESIGN §3, Pack) decides what a recall injects; the
// budget only bounds it. A candidate passes when its Match — the share of
// the query's weight it holds, the same scale for every query and tenant
// (see engram.LexicalHit.Match) — is at least matchFloor and at least
// matchRatio of the best match among the recall's candidates. The floor
// leaves out what shares only common words with the query, so a question
// nothing answers injects nothing; the ratio stops the packing where the
// matches fall off from the best one, so a question one memory answers
// gets that memory and its equals, not the budget's worth of neighbours.
// Neither is a count: a question many memories answer equally well gets
// them all, up to the budget.
//
// Both constants were fixed on LoCoMo conversations 0–4 posted as session
// messages (budget 2000) and are reported on conversations 5–9, with the
// questions no conversation answers (bench/data/locomo/unanswerable.jsonl).
const (
	matchFloor = 0.35
	matchRatio = 0.7
)

// Embedding agreement: with dense search configured, a memory the query's
// embedding ranks among its denseAgree nearest says what the query means
// even where it uses other words, so its lexical match is lifted by
// denseLift of what it lacks: match + (1 − match) × denseLift. A memory
// only the embedding finds then matches denseLift, above matchFloor: the
// embedding's best few pass on their own, the rest of its list needs the
// words. Not tuned (no embeddings endpoint runs in the benchmarks); chosen
// so that agreement alone clears the floor.
const (
	denseAgree = 5
	denseLift  = 0.4
)

// maxLeftOut bounds Recall.LeftOut: the best candidates left out are
// what a reader needs to see where the context stopped.
const maxLeftOut = 10

// The reasons a candidate is left out (ScoreBreakdown.Cut).
const (
	cutBelow      = "below_cut"
	cutSuperseded = "superseded"
	cutBudget     = "budget"
	cutHeldBack   = "held_back"
)

// fuseMatch gives each fused hit its Match: its lexical hit's, lifted by
// agreement with the embedding (see denseLift).
func fuseMatch(fused, lexical, nearest []engram.LexicalHit) []engram.LexicalHit {
	match := make(map[string]float64, len(lexical))
	for _, h := range lexical {
		match[h.Memory.ID] = h.Match
	}
	agree := map[string]bool{}
	for _, h := range nearest[:min(denseAgree, len(nearest))] {
		agree[h.Memory.ID] = true
	}
	for i := range fused {
		id := fused[i].Memory.ID
		m := unit(match[id])
		if agree[id] {
			m += (1 - m) * denseLift
		}
		fused[i].Match = m
	}
	return fused
}

// cut splits a recall's candidates into those to pack, in any order (the
// packer orders them by group, pinned context first, then by score), and
// those left out, each with its Breakdown.Cut. With fill every candidate
// is packed, pinned ones included, as recalls did before the cut. Pinned
// context goes in when identity asks for it or when it passes the cut on
// its own; otherwise it is not a candidate and is not listed as left out
// unless the query found it. A candidate that passes but that a newer
// memory of its subject supersedes, where that memory passes too, is
// left out as superseded: the context says the current value once.
func cut(cands []Candidate, identity, fill bool) (inject, left []Candidate) {
	if fill {
		return cands, nil
	}
	best := 0.0
	for _, c := range cands {
		if !c.Breakdown.Pinned {
			best = max(best, c.Breakdown.Match)
		}
	}
	passes := func(c *Candidate) bool {
		return c.Breakdown.Match >= matchFloor && c.Breakdown.Match >= matchRatio*best
	}
	passed := make(map[string]bool, len(cands))
	for i := range cands {
		if passes(&cands[i]) {
			passed[cands[i].Memory.ID] = true
		}
	}
	for _, c := range cands {
		switch {
		case c.Breakdown.Pinned && (identity || passed[c.Memory.ID]):
			inject = append(inject, c)
		case c.Breakdown.Pinned && c.Breakdown.Relevance == 0:
		case !passed[c.Memory.ID]:
			c.Breakdown.Cut = cutBelow
			left = append(left, c)
		case c.Breakdown.SupersededBy != "" && passed[c.Breakdown.SupersededBy]:
			c.Breakdown.Cut = cutSuperseded
			left = append(left, c)
		default:
			inject = append(inject, c)
		}
	}
	return inject, left
}

// leftOut lists the best of the candidates that were not injected:
// those the cut left out, those of inject that items (what was packed)
// lack, for want of room, and the one exploration held back.
func leftOut(inject, left []Candidate, items []engram.RecallItem, held *engram.RecallItem) []engram.RecallItem {
	packed := make(map[string]bool, len(items))
	for _, it := range items {
		packed[it.ID] = true
	}
	var out []engram.RecallItem
	for _, c := range inject {
		if !packed[c.Memory.ID] && (held == nil || c.Memory.ID != held.ID) {
			c.Breakdown.Cut = cutBudget
			out = append(out, leftItem(c))
		}
	}
	for _, c := range left {
		out = append(out, leftItem(c))
	}
	if held != nil {
		h := *held
		h.Breakdown.Cut = cutHeldBack
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b engram.RecallItem) int { return cmpFloat(b.Score, a.Score) })
	return out[:min(len(out), maxLeftOut)]
}

// leftItem is c as a left-out item: its content and stored token count,
// since it was never rendered.
func leftItem(c Candidate) engram.RecallItem {
	m := c.Memory
	return engram.RecallItem{ID: m.ID, Key: m.Key, Category: m.Category, Version: m.Version, Text: m.Content,
		Tokens: m.TokenCount, Score: c.Breakdown.Score, Breakdown: c.Breakdown}
}
