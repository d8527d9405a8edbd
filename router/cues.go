package router

import (
	"slices"
	"strings"
	"unicode"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// compiledCue is a cue ready to match a normalised text.
type compiledCue struct {
	pattern string
	weight  float64
	atEnd   bool // the pattern must end the text
}

type table[T any] []struct {
	label T
	cues  []compiledCue
}

var (
	intentTable     = compileTable(intentRules)
	modeTable       = compileTable(modeRules)
	constraintTable = compileCues(constraintCues)
	choiceTable     = compileCues(choiceCues)
	lexiconIndex    = compileLexicon(domainLexicon, topicVocabulary)
	neutralTerms    = compileNeutral()
)

// compileNeutral collects the terms learnable skips.
func compileNeutral() map[string]bool {
	neutral := map[string]bool{}
	var all []cue
	for _, r := range intentRules {
		all = append(all, r.cues...)
	}
	for _, r := range modeRules {
		all = append(all, r.cues...)
	}
	all = append(all, cues(0, functionWords)...)
	for _, c := range all {
		for _, t := range analysis.Terms(strings.TrimSuffix(c.text, "*")) {
			neutral[t] = true
		}
	}
	return neutral
}

func compileTable[T any](rules []rule[T]) table[T] {
	t := make(table[T], len(rules))
	for i, r := range rules {
		t[i].label, t[i].cues = r.label, compileCues(r.cues)
	}
	return t
}

// compileCues turns cues into substring patterns of a normalised text: an
// English cue is padded with the spaces that make it match whole words
// (only a leading one for a "*" prefix cue), a Chinese cue stays bare. A
// cue ending in "$" must end the text (去哪玩好 asks for a choice, 好多了
// does not).
func compileCues(cs []cue) []compiledCue {
	out := make([]compiledCue, len(cs))
	for i, c := range cs {
		p := c.text
		atEnd := strings.HasSuffix(p, "$")
		p = strings.TrimSuffix(p, "$")
		switch {
		case strings.IndexFunc(p, isHan) >= 0 && atEnd:
			p += " " // normalize ends every text with a space
		case strings.IndexFunc(p, isHan) >= 0:
		case strings.HasSuffix(p, "*"):
			p = " " + strings.TrimSuffix(p, "*")
		default:
			p = " " + p + " "
		}
		out[i] = compiledCue{pattern: p, weight: c.weight, atEnd: atEnd}
	}
	return out
}

// classify returns the label with the highest cue score plus its extra
// score, the earlier one on a tie, or fallback when no label scores above
// zero.
func classify[T comparable](text string, t table[T], fallback T, extra map[T]float64) T {
	best, label := 0.0, fallback
	for _, rule := range t {
		if s := score(text, rule.cues) + extra[rule.label]; s > best {
			best, label = s, rule.label
		}
	}
	return label
}

// classifyIntent classifies a normalised query's intent. The choice cues
// count for decide only in a query that does not speak of the past: "pasta
// or ramen tonight?" asks for a choice, "which fix worked better, X or Y"
// asks what happened.
func classifyIntent(text string) engram.Intent {
	var extra map[engram.Intent]float64
	if !pastTense(text) {
		extra = map[engram.Intent]float64{engram.IntentDecide: score(text, choiceTable)}
	}
	return classify(text, intentTable, engram.IntentAsk, extra)
}

// pastTense reports whether a normalised English query speaks of the
// past: an auxiliary or irregular verb in the past ("did", "was", "went")
// or a regular past form (a word of five letters or more ending in "ed",
// not "eed": "worked", not "need").
func pastTense(text string) bool {
	for _, w := range strings.Fields(text) {
		if pastWords[w] || len(w) >= 5 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed") {
			return true
		}
	}
	return false
}

var pastWords = map[string]bool{"did": true, "was": true, "were": true, "had": true, "went": true, "got": true,
	"made": true, "took": true, "said": true, "chose": true, "ive": true, "used": true}

func (c compiledCue) matches(text string) bool {
	if c.atEnd {
		return strings.HasSuffix(text, c.pattern)
	}
	return strings.Contains(text, c.pattern)
}

func score(text string, cs []compiledCue) float64 {
	var s float64
	for _, c := range cs {
		if c.matches(text) {
			s += c.weight
		}
	}
	return s
}

// lexEntry is one lexicon keyword as the run of terms it analyses to.
type lexEntry struct {
	domain string
	id     int
	text   string // as written, for domainEvidence
	terms  []string
	weight float64
}

// compileLexicon indexes the entries of the lexicons by their first term;
// an entry that analyses to the terms of one already indexed for its domain
// ("meetings" beside "meeting") is left out, so that one word counts once.
func compileLexicon(lexicons ...map[string][]cue) map[string][]lexEntry {
	index := map[string][]lexEntry{}
	seen := map[string]bool{}
	id := 0
	for _, lex := range lexicons {
		for domain, cs := range lex {
			for _, c := range cs {
				terms := analysis.Terms(c.text)
				key := domain + "\x00" + strings.Join(terms, " ")
				if len(terms) == 0 || seen[key] {
					continue
				}
				seen[key] = true
				index[terms[0]] = append(index[terms[0]], lexEntry{domain: domain, id: id, text: c.text, terms: terms, weight: c.weight})
				id++
			}
		}
	}
	return index
}

// lexiconMatches returns the lexicon entries found in terms, each once.
func lexiconMatches(terms []string) []lexEntry {
	var out []lexEntry
	seen := map[int]bool{}
	for i, t := range terms {
		for _, e := range lexiconIndex[t] {
			if !seen[e.id] && i+len(e.terms) <= len(terms) && slices.Equal(terms[i:i+len(e.terms)], e.terms) {
				seen[e.id] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// normalize prepares a query for cue matching: lower case, full-width ASCII
// folded, apostrophes dropped ("don't" → "dont"), every other non-letter a
// single space, a space between Han and other letters, and a space at both
// ends so that " cue " matches whole words.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(' ')
	space, han := true, false
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		switch {
		case r == '\'' || r == '’':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			h := isHan(r)
			if !space && h != han {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
			space, han = false, h
		case !space:
			b.WriteByte(' ')
			space = true
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// truncate returns the first n runes of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
