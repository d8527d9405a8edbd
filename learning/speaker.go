package learning

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// A speaker-aware read. A session message's episode carries its speaker
// twice: as its text's prefix ("Caroline: …") and as a tag; so does any
// memory written that way. When a query names the speaker of some
// candidates and not of others ("What did Caroline research?"), the
// memories of the speakers it does not name score × speakerDamping, with
// Breakdown.Speaker saying so: in a conversation each speaker calls the
// other by name ("Wow, Caroline!"), so the words of the question bring
// the other speaker's turns as much as the named one's, while what is
// asked about a person is nearly always in what that person said (96% of
// the evidence turns of LoCoMo's tuning questions that name one speaker).
// A query naming every speaker or none, and memories without a speaker,
// are left as they are.
//
// speakerDamping was chosen on LoCoMo's tuning split only (docs/links.md).
const speakerDamping = 0.3

// speakerOf returns the speaker of a memory, or "": the tag its text
// opens with, "speaker: " (a session message's episode, a dialog turn
// stored with its speaker).
func speakerOf(m *engram.Memory) string {
	for _, t := range m.Tags {
		if t != "" && strings.HasPrefix(m.Content, t+": ") {
			return t
		}
	}
	return ""
}

// namedSpeakers returns the speakers of the candidates that the query
// names, or nil when it names none of them or all of them.
func namedSpeakers(query string, cands []Candidate) map[string]bool {
	named, others := map[string]bool{}, false
	seen := map[string]bool{}
	for _, c := range cands {
		s := speakerOf(c.Memory)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		if names(query, s) {
			named[s] = true
		} else {
			others = true
		}
	}
	if len(named) == 0 || !others {
		return nil
	}
	return named
}

// names reports whether query names who: case-insensitively, as a whole
// word where who is written in a script with spaces (so "Jon" is not
// found in "Jonathan"), anywhere in Chinese or Japanese text.
func names(query, who string) bool {
	q, w := strings.ToLower(query), strings.ToLower(who)
	if w == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(q[from:], w)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(q[:i])
		after, _ := utf8.DecodeRuneInString(q[i+len(w):])
		if !wordRune(before) && !wordRune(after) || ideographic(w) {
			return true
		}
		from = i + len(w)
	}
}

// wordRune reports whether r continues a word of a spaced script.
func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) && !ideographic(string(r))
}

// ideographic reports whether s holds a Han, Hiragana or Katakana rune:
// text written without spaces between words.
func ideographic(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			return true
		}
	}
	return false
}

// readSpeakers applies the speaker-aware read: each candidate said by a
// speaker not in named (when named is not empty) scores × speakerDamping,
// once. Pinned memories are left alone.
func readSpeakers(cands []Candidate, named map[string]bool) {
	if len(named) == 0 {
		return
	}
	for i := range cands {
		c := &cands[i]
		s := speakerOf(c.Memory)
		if s == "" || named[s] || c.Breakdown.Pinned || c.Breakdown.Speaker != 0 {
			continue
		}
		c.Breakdown.Speaker = speakerDamping
		c.Breakdown.Score *= speakerDamping
	}
}
