package learning

// Which judged answers make a preference pair, and what a user's
// correction becomes.

import (
	"cmp"
	"encoding/json"
	"math"
	"strings"
	"unicode"
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
// correction's and a memory's) that both must hold, besides one subject
// (see subject.go), for the correction to contradict the memory.
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
// injected that it contradicts: one subject read from both texts (the
// same opening before the values part, see subject.go; a correction is
// free text, so labels and keys are read as words), at least
// subjectOverlap of the smaller term set, and a different value. A
// memory the correction restates or entails (Agrees) is not superseded:
// the feedback credits it as a good answer instead (see credit). P0
// identity memories are never superseded by a correction. The correction
// belongs to the interaction's end user (docs/users.md) and supersedes
// only memories of that same scope: a user's correction never marks the
// tenant's shared memories or another user's. It is as secret as the most
// secret memory the answer rested on (at least the default level), since
// it restates what they said.
func (f *Feedback) Correction(correction string, in *engram.Interaction, feedbackID, category string, rested []engram.Rested) (*engram.Memory, []string) {
	if strings.TrimSpace(correction) == "" {
		return nil, nil
	}
	fix := reading{words: words(correction)}
	terms := termSet(correction)
	var superseded []string
	level := "" // the default level, unless the answer rested on a higher one
	for _, r := range rested {
		if r.Share > 0 && !engram.Cleared(cmp.Or(level, engram.SecurityInternal), r.Memory.SecurityLevel) {
			level = r.Memory.SecurityLevel
		}
	}
	for _, r := range rested {
		if !(r.Share > 0) || r.Memory.Priority == engram.P0 || r.Memory.UserID != in.UserID || f.Agrees(correction, r.Memory) {
			continue
		}
		own := reading{words: words(r.Memory.Content)}
		if _, same := sameSubject(&fix, &own); !same || !covers(terms, termSet(r.Memory.Content)) {
			continue
		}
		superseded = append(superseded, r.Memory.ID)
		if category == "" {
			category = r.Memory.Category
		}
	}
	source, _ := json.Marshal(map[string]string{"kind": "feedback", "feedback_id": feedbackID, "interaction_id": in.ID})
	return &engram.Memory{Content: clip(correction, maxKnowledgeChars), Context: clip(in.Prompt, maxKnowledgeChars),
		Category: category, Type: "correction", Source: source, UserID: in.UserID, SecurityLevel: level}, superseded
}

// Agrees reports whether a user's correction restates or entails m, or m
// the correction: the words of one (letter case and punctuation aside)
// run unbroken through the other, and the shorter holds at least half
// the longer's terms — "Deploys are frozen from December 20 to January
// 3" and "Deploys are frozen from December 20 to January 3 every year"
// agree; "the user drinks tea with milk" and "… without milk" do not.
func (f *Feedback) Agrees(correction string, m *engram.Memory) bool {
	a, b := plainWords(correction), plainWords(m.Content)
	if len(a) > len(b) {
		a, b = b, a
	}
	if a == "" || !strings.Contains(" "+b+" ", " "+a+" ") {
		return false
	}
	short, long := len(analysis.Terms(a)), len(analysis.Terms(b))
	return short > 0 && 2*short >= long
}

// plainWords is text's words, lower-cased, one space apart.
func plainWords(text string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

// covers reports whether two term sets (see termSet) share at least
// subjectOverlap of the smaller.
func covers(a, b []uint64) bool {
	shared := sharedTerms(a, b)
	return float64(shared) >= subjectOverlap*float64(min(len(a), len(b)))
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
