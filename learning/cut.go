package learning

import (
	"slices"
	"strings"

	"github.com/engram-memory/engram"
)

// The relevance cut (DESIGN §3, Pack) decides what a recall injects; the
// budget only bounds it. It reads two measures of each candidate: its
// Match, the share of the query's weight it holds, the same scale for
// every query and tenant (see engram.LexicalHit.Match), and its score,
// which ranks. Three rules, all of which a memory must pass:
//
//   - The recall is answerable: its best match is at least answerFloor.
//     A question about something nobody mentioned shares only common words
//     with any memory and injects nothing at all.
//   - The memory says something of the query: its own match is at least
//     matchFloor, so a memory that ranks by one word does not ride along.
//   - The memory is among the best: its score times its match is at least
//     keyRatio of the recall's best such product. This is where the
//     packing stops as the scores fall off. Weighing the score by the
//     match lets a memory that covers the question but ranks lower (an
//     older turn, a preference with little reward yet) stay, and drops one
//     that ranks high on a single rare word. It is not a count: a question
//     one memory answers gets that memory and its near equals, one that
//     many answer alike gets them all, up to the budget.
//
// A reflection (the L3 layer) passes on its own match (at least
// answerFloor) and does not set the best product, which is the memories'
// (its relevance is relative to the other reflections only).
//
// The constants were fixed on LoCoMo conversations 0–4 posted as session
// messages at budget 2000, with the questions no conversation answers
// (bench/data/locomo/unanswerable.jsonl), as the best context recall with
// mean tokens_used ≤ 560 and ≤ 45 tokens for questions nothing answers,
// chosen by replaying every candidate of every question (the bench's
// --trace); the run itself gives context recall 0.730 in 548 tokens, 45
// where nothing answers (the score alone, ratio 0.24 and floor 0.2, gives
// 0.719 in 544, 48). They are reported on conversations 5–9. Each step of
// 0.01 in keyRatio moves about 0.006 of context recall and 35 tokens;
// matchFloor is what keeps the unanswerable questions near empty (0.2
// lets them inject 62 tokens, 0.24 30 at 0.005 less context recall).
const (
	answerFloor = 0.3
	matchFloor  = 0.22
	keyRatio    = 0.115
)

// Embedding agreement: with dense search configured, a memory the query's
// embedding ranks among its denseAgree nearest says what the query means
// even where it uses other words, so its lexical match is lifted by
// denseLift of what it lacks: match + (1 − match) × denseLift. A memory
// only the embedding finds then matches denseLift, above answerFloor and
// matchFloor: the embedding's best few pass on their own (a Chinese
// question finds an English memory), the rest of its list needs the
// words. Chosen so that agreement alone clears the floors. Measured on
// LoCoMo's tuning split with a sentence encoder (docs/links.md, "Dense
// recall"): context recall 0.79 against 0.74 lexical, but a question
// nothing answers injects 6 items against 0.7, the embedding's nearest
// being near to anything; a lift of 0.2 would keep that to 1.4 items at
// the cost of the cross-language find. The floor on the cosine
// (embeddings.agree_floor, DenseConfig.AgreeFloor) keeps them out
// instead, for a model whose cosines the operator has measured.
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
// agreement with the embedding (see denseLift): one of the denseAgree
// nearest whose cosine is at least floor.
func fuseMatch(fused, lexical, nearest []engram.LexicalHit, floor float64) []engram.LexicalHit {
	match := make(map[string]float64, len(lexical))
	for _, h := range lexical {
		match[h.Memory.ID] = h.Match
	}
	agree := map[string]bool{}
	for _, h := range nearest[:min(denseAgree, len(nearest))] {
		if h.Score >= floor {
			agree[h.Memory.ID] = true
		}
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
	bestMatch, bestKey := 0.0, 0.0
	for _, c := range cands {
		if !c.Breakdown.Pinned && !reflection(c) {
			bestMatch = max(bestMatch, c.Breakdown.Match)
			bestKey = max(bestKey, cutKey(c.Breakdown))
		}
	}
	passed := make(map[string]bool, len(cands))
	for _, c := range cands {
		b := c.Breakdown
		if reflection(c) {
			passed[c.Memory.ID] = b.Match >= answerFloor
		} else {
			passed[c.Memory.ID] = bestMatch >= answerFloor && b.Match >= matchFloor && cutKey(b) >= keyRatio*bestKey
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

// cutKey is what the cut compares with the recall's best: the score
// weighed by how much of the query the memory covers (see keyRatio).
func cutKey(b engram.ScoreBreakdown) float64 {
	return b.Score * b.Match
}

// reflection reports whether c is a reflection (see reflectionCandidates).
func reflection(c Candidate) bool {
	return c.Memory.Type == ReflectionType && strings.HasPrefix(c.Memory.ID, "refl_")
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
