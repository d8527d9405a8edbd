package index

import (
	"strings"
	"unicode"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// Term weights, in tenths of an occurrence: term frequencies and lengths
// are kept as integers of tenths, so that adding and removing a memory
// leaves the statistics exactly as they were.
const (
	// bodyWeight counts a term of the content or summary once.
	bodyWeight = 10
	// metaWeight counts a term of the key, tags, type or subcategory
	// twice: a tag says what a memory is about.
	metaWeight = 20
	// contextWeight counts a term of the context (where the memory came
	// from) half: it says what the memory answers, not what it is.
	contextWeight = 5
	// learnedWeight counts a term of a query the memory answered well
	// (Memory.Learned) 0.3 times: evidence from feedback, weaker than the
	// memory's own words.
	learnedWeight = 3
)

// live reports whether m is recallable at all: valid and not archived.
func live(m *engram.Memory) bool { return m != nil && m.Valid && !m.Archived }

// rankTerms returns the weighted term frequencies of a memory and its
// weighted length, in tenths; nil for a memory that is not live.
func rankTerms(m *engram.Memory) (map[string]uint32, uint32) {
	if !live(m) {
		return nil, 0
	}
	tf := map[string]uint32{}
	var dl uint32
	add := func(terms []string, w uint32) {
		for _, t := range terms {
			tf[t] += w
			dl += w
		}
	}
	add(analysis.Terms(m.Content+"\n"+m.Summary), bodyWeight)
	add(analysis.Terms(m.Context), contextWeight)
	add(analysis.QueryTerms(m.Learned), learnedWeight)
	add(analysis.Terms(strings.Join(m.Tags, " ")+" "+m.Key+" "+m.Subcategory+" "+m.Type), metaWeight)
	return tf, dl
}

// sameText reports whether a and b are indexed alike: the fields
// rankTerms reads are equal.
func sameText(a, b *engram.Memory) bool {
	if a.Content != b.Content || a.Summary != b.Summary || a.Context != b.Context || a.Learned != b.Learned ||
		a.Key != b.Key || a.Subcategory != b.Subcategory || a.Type != b.Type || len(a.Tags) != len(b.Tags) {
		return false
	}
	for i := range a.Tags {
		if a.Tags[i] != b.Tags[i] {
			return false
		}
	}
	return true
}

// calendarTerms are the analysed names of the months and weekdays.
var calendarTerms = func() map[string]bool {
	out := map[string]bool{}
	for _, t := range analysis.Terms("January February March April May June July August September October November December " +
		"Monday Tuesday Wednesday Thursday Friday Saturday Sunday") {
		out[t] = true
	}
	return out
}()

// timeTerm reports whether a query term names a time: a month, a weekday,
// a number ("2023", "25") or an ordinal ("8th"). Such a term says when
// the answer happened, which a memory holds as its occurred_at rather than
// in its words, so it weighs nothing in a hit's Match ("What did Nate do
// for Joanna on 25 May, 2022?" is answered by a turn that says neither
// "25" nor "2022"); it still counts in the score.
func timeTerm(term string) bool {
	if calendarTerms[term] {
		return true
	}
	digits := strings.TrimRightFunc(term, unicode.IsLetter)
	if digits == "" || len(term)-len(digits) > 2 {
		return false
	}
	for _, r := range digits {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// cjkTerm reports whether a term is a Chinese or Japanese bigram (see
// analysis.Terms).
func cjkTerm(term string) bool {
	for _, r := range term {
		return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
	}
	return false
}
