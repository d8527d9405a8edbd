package engram

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FirstEntity returns the first name text mentions, or "": a capitalised
// word (at least three letters, not all capitals) that does not open a
// sentence and is not a common word that English capitalises (days,
// months, I), nor one of skip (e.g. the speakers of a conversation, whom
// every turn names). Chinese has no capitals, so Chinese text names none.
func FirstEntity(text string, skip ...string) string {
	if names := entities(text, true, skip); len(names) > 0 {
		return names[0]
	}
	return ""
}

// Entities returns every distinct name text mentions, by the rules of
// FirstEntity, in order of first mention.
func Entities(text string, skip ...string) []string {
	return entities(text, false, skip)
}

// entities lists the names of text (only the first when first is set).
func entities(text string, first bool, skip []string) []string {
	var out []string
	start := true
	for _, f := range strings.Fields(text) {
		word := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) })
		word = strings.TrimSuffix(strings.TrimSuffix(word, "'s"), "’s")
		opens := start
		last, _ := utf8.DecodeLastRuneInString(f)
		start = strings.ContainsRune(".!?:;\"“", last)
		r, _ := utf8.DecodeRuneInString(word)
		if opens || utf8.RuneCountInString(word) < 3 || !unicode.IsUpper(r) || word == strings.ToUpper(word) {
			continue
		}
		if slices.Contains(commonCapitals, strings.ToLower(word)) || slices.ContainsFunc(skip, func(s string) bool { return strings.EqualFold(s, word) }) {
			continue
		}
		if !slices.Contains(out, word) {
			out = append(out, word)
		}
		if first {
			break
		}
	}
	return out
}

// commonCapitals are words English capitalises that name no entity of a
// conversation.
var commonCapitals = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
	"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
	"november", "december", "i'm", "i've", "i'll", "i'd", "mom", "dad", "hey", "wow", "thanks", "yes", "yeah",
	"omg", "lol", "christmas", "easter", "god"}
