package learning

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// The subject of a memory: which entity it says something about, and
// which attribute of it. A knowledge update (knowledge.go) and a user's
// correction (feedbackpairs.go) replace a memory only by one of the same
// subject; sharing words is not enough. "Maya Ruiz: Has a dog named
// Waffles" and "Gavin Ruiz: Has a dog named Waffles" share four words in
// five and are two subjects; "Maya Ruiz: Lives in Lisbon" and "Maya Ruiz:
// Lives in Oslo" are one, with two values.
//
// The entity is read, first to last, from
//
//  1. the client's word: a tag "subject:<name>" (SubjectTag). Two memories
//     are one subject exactly when both carry the same one (letter case
//     aside), whatever their text; one that carries it and one that does
//     not are two. A tag rides in an existing field that recall already
//     reads (a memory's data is not loaded for ranking), so no migration.
//  2. the key: a keyed memory's entity is its key's parent, so
//     /people/maya/city and /people/maya/notes are about one entity and
//     /people/gavin/city about another; a keyed and an unkeyed memory are
//     never one subject (writing the key again is how a keyed value is
//     replaced).
//  3. the label: text opening with a short label and a colon, "Maya Ruiz:
//     …" — the form of every conversation episode, whose label is its
//     session speaker (working/events.go writes "Speaker: text" with the
//     speaker as a tag). Two labels that differ, or a label on one side
//     only, are two entities: what Caroline said is not what Melanie said.
//  4. the names leading the text: the capitalised words that open it
//     ("Maya Ruiz lives in Lisbon"), a sentence's first word counting only
//     when the next word is capitalised too or it is a possessive
//     ("Dana's favourite tea").
//
// The attribute is what the two texts say about the entity before their
// values differ: the terms they open with in common, after the label.
// Two memories are one subject when that common opening holds a word
// that is not a name (the attribute: "lives", "favourite tea") — two
// texts that part after the names alone ("Maya Ruiz lives…", "Maya Ruiz
// works…") say different things about one person, and two that differ
// from their first word ("Maya Ruiz…", "Gavin Ruiz…") are about
// different entities, as are two that differ only in names between a
// common opening and a common close ("In 2024 Maya Ruiz moved to
// Lisbon", "In 2024 Gavin Ruiz moved to Lisbon"). For a knowledge update
// the two must still share updateOverlap of their terms (the key's
// parent counted as words), so that one attribute phrased alike is not
// enough for two long turns that only begin alike.
//
// Every mistake left goes one way: two texts about one subject phrased
// differently ("Maya moved to Oslo" after "Maya Ruiz: Lives in Lisbon")
// are read as two subjects, and both stay in the recall; a reading that
// made two people one would demote a person's fact for someone else's.
//
// The tenant's term statistics are not used. Names and values are
// equally rare in a tenant of look-alike facts (in the knowledge
// benchmark a first name is in one fact in 118, a city in one in 160),
// so document frequency separates neither,
// and it is each server's index state: a rule reading it would rank
// differently on a server whose index is behind. The reading above needs
// nothing but the two rows, so every server reads the same subject.
// Nothing here was tuned on a benchmark: the label bounds are what a
// name before a colon can be.

// SubjectTag is the prefix of the tag by which a client names a memory's
// subject itself ("subject:maya ruiz/city").
const SubjectTag = "subject:"

// maxLabelChars and maxLabelWords bound a label: longer openings before
// a colon are a sentence, not a name.
const (
	maxLabelChars = 48
	maxLabelWords = 4
)

// reading is what a memory says its subject is.
type reading struct {
	client string // the client's subject, lower-cased; "" for none
	keyed  bool
	parent string // the key's parent
	label  string // the label as written; "" for none
	words  []word // the text after the label, stop words left out
}

// word is one index term of a text with the form it was written in.
type word struct {
	term, raw string
	name      bool // capitalised, so probably part of a name
}

// read reads m's subject.
func read(m *engram.Memory) reading {
	r := reading{}
	for _, t := range m.Tags {
		if len(t) > len(SubjectTag) && strings.EqualFold(t[:len(SubjectTag)], SubjectTag) {
			r.client = strings.ToLower(strings.TrimSpace(t[len(SubjectTag):]))
			break
		}
	}
	if m.Key != "" {
		r.keyed, r.parent = true, path.Dir(strings.TrimSuffix(m.Key, "/"))
	}
	text := m.Content
	if i := strings.Index(text, ": "); i > 0 && i <= maxLabelChars {
		if l := strings.TrimSpace(text[:i]); label(l) {
			r.label, text = l, text[i+2:]
		}
	}
	r.words = words(text)
	return r
}

// label reports whether s reads as a label: one to maxLabelWords words
// of letters, digits, apostrophes, hyphens and dots (Dr. Li), no other
// punctuation.
func label(s string) bool {
	fields := strings.Fields(s)
	if len(fields) == 0 || len(fields) > maxLabelWords {
		return false
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r) || strings.ContainsRune("'’-._", r)) {
			return false
		}
	}
	return true
}

// words splits text into its index terms, each with the word it came
// from and whether that word reads as a name (see the rule above).
func words(text string) []word {
	var out []word
	start := true // the next word opens a sentence
	opener := -1  // the word of out that opened the last sentence, while it is the last word
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '!' || r == '?')
	}) {
		raw := strings.Trim(f, ".!?")
		if raw == "" {
			start = true
			continue
		}
		r, _ := utf8.DecodeRuneInString(raw)
		capital := unicode.IsUpper(r)
		// A sentence's first word is a name only when the next word is
		// capitalised too ("Maya Ruiz") or a possessive ("Dana's"), not
		// "Lives in".
		if opener >= 0 && (capital || raw == "s") {
			out[opener].name = true
		}
		opener = -1
		if ts := analysis.Terms(raw); len(ts) == 1 {
			out = append(out, word{term: ts[0], raw: raw, name: capital && !start})
			if start {
				opener = len(out) - 1
			}
		}
		start = strings.ContainsAny(f[len(f)-1:], ".!?")
	}
	return out
}

// namesDiffer reports whether two texts that open alike for n words then
// differ in names only and close alike with a word that is not a name:
// "In 2024 Maya Ruiz moved to Lisbon" and "In 2024 Gavin Ruiz moved to
// Lisbon" say one thing of two people. A value differs at the end
// ("… moved to Lisbon", "… moved to Oslo") or in words that are not
// names.
func namesDiffer(a, b []word, n int) bool {
	i, j := len(a), len(b)
	tail := false
	for i > n && j > n && a[i-1].term == b[j-1].term {
		i, j = i-1, j-1
		tail = tail || !a[i].name
	}
	if !tail || i == n || j == n {
		return false
	}
	for _, w := range append(a[n:i:i], b[n:j]...) {
		if !w.name {
			return false
		}
	}
	return true
}

// sameSubject reports whether a and b are one subject (see the rule
// above), and names it: the entity, " / ", the attribute.
func sameSubject(a, b *reading) (string, bool) {
	if a.client != "" || b.client != "" {
		return a.client, a.client == b.client
	}
	if a.keyed != b.keyed || a.parent != b.parent || !strings.EqualFold(a.label, b.label) {
		return "", false
	}
	n := 0
	for n < len(a.words) && n < len(b.words) && a.words[n].term == b.words[n].term {
		n++
	}
	var names, attr []string
	for _, w := range a.words[:n] {
		if w.name && len(attr) == 0 {
			names = append(names, w.raw)
		} else {
			attr = append(attr, w.raw)
		}
	}
	if len(attr) == 0 || namesDiffer(a.words, b.words, n) {
		return "", false
	}
	entity := strings.Join(names, " ")
	switch {
	case a.label != "":
		entity = strings.TrimSpace(a.label + " " + entity)
	case a.keyed:
		entity = strings.TrimSpace(a.parent + " " + entity)
	}
	if entity == "" {
		return strings.Join(attr, " "), true
	}
	return entity + " / " + strings.Join(attr, " "), true
}
