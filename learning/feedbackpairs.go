package learning

// Which judged answers make a preference pair, and what a user's
// correction becomes.

import (
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// Pair says whether two judged answers to one prompt make a preference
// pair, of which kind and with what margin (the answer with the higher
// signal is the chosen one): two answers whose signals differ
// by at least 1 make a pair — a rating pair when both are ratings (two
// stars or more apart), a regeneration pair when either is a thumb (up
// against down, or a thumb against a rating). The margin is the difference.
func (f *Feedback) Pair(a, b engram.Judgement) (string, float64, bool) {
	diff := math.Abs(a.Signal - b.Signal)
	switch {
	case diff < 1:
		return "", 0, false
	case a.Rating && b.Rating:
		return engram.PairRating, diff, true
	default:
		return engram.PairRegeneration, diff, true
	}
}

// CorrectionMargin is the margin of the pair a user's correction makes
// with the answer judged by signal: a correction beats
// the answer it corrects by 1, and by more the worse that answer was
// judged (1 − min(signal, 0): 2 for a thumb down).
func (f *Feedback) CorrectionMargin(signal float64) float64 { return 1 - math.Min(signal, 0) }

// subjectOverlap is the share of the smaller of two term sets (a
// correction's and a memory's) that both must hold for the memory to be
// about the correction's subject.
const subjectOverlap = 0.5

// maxKnowledgeChars bounds the text of a memory made from a correction
// (its content) and from the corrected prompt (its context).
const maxKnowledgeChars = 4000

// Correction turns a user's correction of an answer into a new L2 memory
// (nil for none) and names the memories the answer rested on that it
// supersedes. The correction becomes an
// L2 memory of type "correction" whose source names the feedback and the
// interaction, whose context is the corrected prompt (searched, never
// injected, so the same question finds it), in the category of the
// answer's route (else of the first memory it supersedes, else the
// default). It supersedes each memory the corrected answer's recall
// injected that shares the subject: at least subjectOverlap of the
// smaller term set. P0 identity memories are never superseded by a
// correction.
func (f *Feedback) Correction(correction string, in *engram.Interaction, feedbackID, category string, rested []engram.Rested) (*engram.Memory, []string) {
	if strings.TrimSpace(correction) == "" {
		return nil, nil
	}
	terms := map[string]bool{}
	for _, t := range analysis.Terms(correction) {
		terms[t] = true
	}
	var superseded []string
	for _, r := range rested {
		if !(r.Share > 0) || r.Memory.Priority == engram.P0 {
			continue
		}
		own := map[string]bool{}
		for _, t := range analysis.Terms(r.Memory.Content) {
			own[t] = true
		}
		shared := 0
		for t := range own {
			if terms[t] {
				shared++
			}
		}
		if smaller := min(len(own), len(terms)); smaller > 0 && float64(shared) >= subjectOverlap*float64(smaller) {
			superseded = append(superseded, r.Memory.ID)
			if category == "" {
				category = r.Memory.Category
			}
		}
	}
	source, _ := json.Marshal(map[string]string{"kind": "feedback", "feedback_id": feedbackID, "interaction_id": in.ID})
	return &engram.Memory{Content: clip(correction, maxKnowledgeChars), Context: clip(in.Prompt, maxKnowledgeChars),
		Category: category, Type: "correction", Source: source}, superseded
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
