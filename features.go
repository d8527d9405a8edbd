package engram

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FeaturePrefix starts every feature key (see Memory.Features).
const FeaturePrefix = "feature:"

// AllFeatures is the key under which the store sums the feature evidence
// every judged memory adds, the reference a feature's is compared with.
const AllFeatures = FeaturePrefix + "*"

// RetiredFeatures are the prefixes of feature keys Memory.Features no
// longer names (the category, until 2026-11-27). A store that learned
// before keeps their evidence rows; no memory reads them, and listings of
// the learned model leave them out.
var RetiredFeatures = []string{FeaturePrefix + "category="}

// FeatureWeight is what the learned helpfulness model holds of one
// feature: the evidence of the judged recalls that injected memories
// with it and the log factor it applies to them (negative: distrusted,
// positive: trusted; see learning.Scorer.Features).
type FeatureWeight struct {
	Feature string  `json:"feature"`
	Weight  float64 `json:"weight"`
	Good    float64 `json:"good"`
	Bad     float64 `json:"bad"`
}

// maxFeatureTags is how many of a memory's tags count as features.
const maxFeatureTags = 4

// Features names the kinds a memory belongs to, each a key under
// FeaturePrefix: its type, key prefix, tags, length, the shape
// of its text (a list of words, a question, a template with a slot, a
// sentence), its share of function words (a bag of keywords has none),
// its first word (a "Keywords:" label; not a speaker's name) and
// first two words after a "Label:" prefix (not in a speaker's voice,
// see below), whether it is in a speaker's voice (its text opens with
// one of its tags as a label, the form of a conversation's episode) or
// not, and how it was written (its source's kind). Feedback adds to the evidence of every
// feature of the memories it judges, so what answers teach about one
// kind of memory reaches memories of that kind nobody has judged yet;
// the memory's own evidence (under its id) is the residual. Only fields
// the feedback's locked read fills are used (no summary, data or context).
// The voice is the form, not the speaker: a note an extractor wrote
// beside a conversation's turns ("Remember to ask about …") is none
// whatever its wording, while which speaker said a turn stays unread.
// A speaker is not a feature either: neither the tag its text opens
// with ("Caroline: …" tagged Caroline) nor that first word. The
// speaker-aware read (learning/speaker.go) fills a recall that names a
// speaker with that speaker's memories, so a bad answer's distrust landed
// on the speaker and sank every true memory they said (on the learning
// benchmark's tuning seeds 1 and 11, plain LoCoMo lost 0.003 and 0.031
// with the speaker as a feature, 0.001 and 0.006 without).
// Nor are a turn's leading words: in a speaker's voice they are mostly a
// greeting that names whom it addresses ("hey john", "thanks caroline"):
// 79 to 222 small kinds a conversation (the learning benchmark's tuning
// seed 1), of which the few that reached the feature model's minimum
// evidence were read as distrusted by a handful of answers and sank the
// true turns of their kind on plain LoCoMo (see docs/learning-model.md).
// Its category is not a feature: a category's share of good answers says
// more about how hard the questions asked of it are than about its
// memories (on the learning benchmark's tuning seeds it sank the true
// turns of hard categories on plain LoCoMo and let a hostile rater's
// flips move whole categories).
func (m *Memory) Features() []string {
	out := []string{FeaturePrefix + "type=" + m.Type}
	if m.Key != "" {
		p := strings.TrimLeft(m.Key, "/")
		if i := strings.IndexAny(p, "/:."); i > 0 {
			p = p[:i]
		}
		out = append(out, FeaturePrefix+"key="+p)
	}
	speaker, text := m.spoken()
	tags := 0
	for _, t := range m.Tags {
		if t != "" && strings.HasPrefix(m.Content, t+": ") {
			continue // who said it is not a kind: see the doc comment
		}
		if tags == maxFeatureTags {
			continue
		}
		tags++
		out = append(out, FeaturePrefix+"tag="+strings.ToLower(t))
	}
	out = append(out, FeaturePrefix+"len="+lengthClass(text), FeaturePrefix+"shape="+shape(text))
	if c := stopClass(text); c != "" {
		out = append(out, FeaturePrefix+"stop="+c)
	}
	if first, _ := leading(m.Content); first != "" && speaker == "" {
		out = append(out, FeaturePrefix+"lead1="+first)
	}
	voice := "speaker"
	if speaker == "" {
		voice = "none"
	}
	out = append(out, FeaturePrefix+"voice="+voice)
	if _, two := leading(text); two != "" && speaker == "" {
		out = append(out, FeaturePrefix+"lead2="+two)
	}
	return append(out, FeaturePrefix+"write="+writePath(m.Source))
}

// spoken returns the tag the memory's text opens with as a label (its
// speaker, "" for none) and its text without a label of at most 40
// characters.
func (m *Memory) spoken() (speaker, text string) {
	for _, t := range m.Tags {
		if t != "" && strings.HasPrefix(m.Content, t+": ") {
			speaker = t
		}
	}
	_, text, ok := strings.Cut(m.Content, ": ")
	if !ok || utf8.RuneCountInString(m.Content)-utf8.RuneCountInString(text) > 40 {
		text = m.Content
	}
	return speaker, text
}

// WordFeatures returns the keys of the memory's features that carry its
// words (FeatureHasWords) under this reading of its features and under
// the earlier one a store may still hold evidence for: until 2026-11-27
// a turn in a speaker's voice had its leading words read as a kind
// (lead2=…). Forgetting the memory's user erases them (store.ForgetUser).
func (m *Memory) WordFeatures() []string {
	var out []string
	for _, f := range m.Features() {
		if FeatureHasWords(f) {
			out = append(out, f)
		}
	}
	if speaker, text := m.spoken(); speaker != "" {
		if _, two := leading(text); two != "" {
			out = append(out, FeaturePrefix+"lead2="+two)
		}
	}
	return out
}

// FeatureHasWords reports whether a feature key carries words of a
// memory (its leading words, a tag or its key prefix) rather than a class
// of it; forgetting a user erases those (store.ForgetUser).
func FeatureHasWords(feature string) bool {
	for _, p := range []string{"lead1=", "lead2=", "tag=", "key="} {
		if strings.HasPrefix(feature, FeaturePrefix+p) {
			return true
		}
	}
	return false
}

// lengthClass buckets a text by its words (wordCount): tiny, short,
// medium or long.
func lengthClass(text string) string {
	switch n := wordCount(text); {
	case n < 8:
		return "tiny"
	case n < 20:
		return "short"
	case n < 60:
		return "medium"
	}
	return "long"
}

// stopClass buckets a text by the share of its words that are function
// words (stopWord, hanStopChars): "none" under 8% (a bag of keywords,
// whatever its wording or separators), "few" under 25%, else "many"
// (English prose runs at 30–50%); in a mostly Chinese text, whose prose
// has fewer function characters, under 4% and 10%. "" for a text of
// fewer than four words, too short to tell.
func stopClass(text string) string {
	n, stop, hans := 0, 0, 0
	for _, f := range strings.Fields(strings.ToLower(text)) {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		han := 0
		for _, r := range w {
			if unicode.Is(unicode.Han, r) {
				han++
				if strings.ContainsRune(hanStopChars, r) {
					stop++
				}
			}
		}
		switch {
		case han > 0:
			n += han
			hans += han
		case w != "":
			n++
			if stopWord[w] {
				stop++
			}
		}
	}
	if n < 4 {
		return ""
	}
	none, few := 0.08, 0.25
	if 2*hans > n {
		none, few = 0.04, 0.1
	}
	switch share := float64(stop) / float64(n); {
	case share < none:
		return "none"
	case share < few:
		return "few"
	}
	return "many"
}

// stopWord holds common English function words: articles, pronouns,
// auxiliaries, prepositions and conjunctions.
var stopWord = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the i me my we our you your he him his she her it its they them their
		this that these those is am are was were be been being have has had do does did will would can could
		should shall may might must to of in on at by for with from about as into over after before than then
		and or but so if because when while not no just very too also there here what which who how`) {
		m[w] = true
	}
	return m
}()

// hanStopChars are common Chinese function characters (particles,
// pronouns, copula, prepositions).
const hanStopChars = "的了是在我你他她它们和也就都而及与或但这那个着过吗呢吧啊把被给从对向于一有不很会要到"

// wordCount counts a text's words, each Han character one.
func wordCount(text string) int {
	n := 0
	for _, f := range strings.Fields(text) {
		han := 0
		for _, r := range f {
			if unicode.Is(unicode.Han, r) {
				han++
			}
		}
		n += max(han, 1)
	}
	return n
}

// shape says what a text looks like: "template" (a slot such as {name},
// <name>, ___ or [slot]), "list" (mostly separators between short items,
// no sentence), "question" (ends with a question mark), else "sentence".
func shape(text string) string {
	t := strings.TrimSpace(text)
	switch {
	case strings.Contains(t, "___") || (strings.Contains(t, "{") && strings.Contains(t, "}")) ||
		strings.Contains(t, "[slot]") || (strings.Contains(t, "<") && strings.Contains(t, ">")):
		return "template"
	}
	words := wordCount(t)
	seps := strings.Count(t, ",") + strings.Count(t, ";") + strings.Count(t, "/") + strings.Count(t, "、") +
		strings.Count(t, "，") + strings.Count(t, "；")
	if words > 0 && float64(seps) >= 0.25*float64(words) && strings.Count(strings.TrimRight(t, ".!?。"), ".") == 0 {
		return "list"
	}
	if strings.HasSuffix(t, "?") || strings.HasSuffix(t, "？") {
		return "question"
	}
	return "sentence"
}

// leading is a text's first word and first two words in lower case
// (first character and first two when it starts with Han script), ""
// for an empty text.
func leading(text string) (first, two string) {
	t := strings.TrimSpace(text)
	if r, _ := utf8.DecodeRuneInString(t); unicode.Is(unicode.Han, r) {
		rs := []rune(t)
		return string(rs[:1]), string(rs[:min(2, len(rs))])
	}
	fields := strings.Fields(strings.ToLower(t))
	for i, f := range fields {
		fields[i] = strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	if len(fields) == 0 {
		return "", ""
	}
	return fields[0], strings.Join(fields[:min(2, len(fields))], " ")
}

// writePath is how a memory was written, from its source: the kind of a
// provenance object ("session" for session episodes, "import", …), the
// part before ':' of a source string, "none" without a source.
func writePath(src json.RawMessage) string {
	var s string
	if json.Unmarshal(src, &s) == nil {
		k, _, _ := strings.Cut(s, ":")
		return "string:" + k
	}
	var p Provenance
	if json.Unmarshal(src, &p) == nil && p.Kind != "" {
		return p.Kind
	}
	return "none"
}
