package bench

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"unicode"

	"github.com/engram-memory/engram"
)

// fake is one generated misleading memory.
type fake struct {
	kind string
	m    *engram.Memory
}

// misleading writes the conversation's misleading memories. Stale versions
// and near-duplicates copy an evidence turn that answers at least one
// training and one held-out question (so feedback on the one can teach the
// other), with one detail changed that none of those questions names; a
// stuffed note names the topic words of two training and two held-out
// questions and states nothing.
func misleading(ctx context.Context, svc Services, rng *rand.Rand, mix Mix, turns []*engram.Memory, dia []string,
	train, held []locomoQuestion) ([]fake, error) {
	nq := len(train) + len(held)
	byDia := make(map[string]*engram.Memory, len(dia))
	for i, d := range dia {
		byDia[d] = turns[i]
	}
	inTrain, inHeld := map[string][]locomoQuestion{}, map[string]bool{}
	for _, q := range train {
		for d := range q.gold {
			inTrain[d] = append(inTrain[d], q)
		}
	}
	for _, q := range held {
		for d := range q.gold {
			inHeld[d] = true
		}
	}
	var spanning []string
	for _, d := range dia {
		if len(inTrain[d]) > 0 && inHeld[d] {
			spanning = append(spanning, d)
		}
	}
	rng.Shuffle(len(spanning), func(i, j int) { spanning[i], spanning[j] = spanning[j], spanning[i] })
	vocab := conversationVocab(turns)
	var out []fake
	// Stale versions and near-duplicates take turns at the copied turns.
	want := map[string]int{KindStale: int(math.Round(mix[KindStale] * float64(nq))), KindNearDup: int(math.Round(mix[KindNearDup] * float64(nq)))}
	for len(spanning) > 0 && want[KindStale]+want[KindNearDup] > 0 {
		kind := KindStale
		if want[KindNearDup] > want[KindStale] || (want[KindNearDup] == want[KindStale] && len(spanning)%2 == 0) {
			kind = KindNearDup
		}
		d := spanning[0]
		spanning = spanning[1:]
		asked := map[string]bool{}
		for _, q := range inTrain[d] {
			for _, w := range words(q.text) {
				asked[w] = true
			}
		}
		src := byDia[d]
		text, ok := changeDetail(src.Content, asked, vocab, rng)
		if !ok {
			continue
		}
		m := &engram.Memory{Content: text, Category: src.Category, Source: json.RawMessage(`{"kind":"bench","name":"learning-` + kind + `"}`),
			Tags: src.Tags, Type: src.Type, Context: src.Context, Data: src.Data}
		out = append(out, fake{kind: kind, m: m})
		want[kind]--
	}
	for range int(math.Round(mix[KindStuffed] * float64(nq))) {
		if len(train) < 2 || len(held) < 2 {
			break
		}
		var topics []string
		seen := map[string]bool{}
		for _, q := range []locomoQuestion{train[rng.IntN(len(train))], train[rng.IntN(len(train))],
			held[rng.IntN(len(held))], held[rng.IntN(len(held))]} {
			for _, w := range words(q.text) {
				if !seen[w] {
					seen[w] = true
					topics = append(topics, w)
				}
			}
		}
		content := stuffedWordings[rng.IntN(len(stuffedWordings))](topics)
		route, err := svc.Router.RouteQuery(ctx, content)
		if err != nil {
			return nil, err
		}
		out = append(out, fake{kind: KindStuffed, m: &engram.Memory{Content: content, Category: route.Domains[0].Name, Type: "note",
			Source: json.RawMessage(`{"kind":"bench","name":"learning-stuffed"}`)}})
	}
	topicsOf := func(q locomoQuestion) string {
		w := words(q.text)
		return strings.Join(w[:min(len(w), 3)], " ")
	}
	speakers := speakersOf(turns)
	for range int(math.Round(mix[KindChatter] * float64(nq))) {
		if len(train) == 0 || len(held) == 0 || len(speakers) == 0 {
			break
		}
		t, h := topicsOf(train[rng.IntN(len(train))]), topicsOf(held[rng.IntN(len(held))])
		content := speakers[rng.IntN(len(speakers))] + ": " + chatterWordings[rng.IntN(len(chatterWordings))](t, h)
		src := turns[rng.IntN(len(turns))]
		out = append(out, fake{kind: KindChatter, m: &engram.Memory{Content: content, Category: src.Category, Tags: src.Tags,
			Type: src.Type, Source: json.RawMessage(`{"kind":"bench","name":"learning-chatter"}`)}})
	}
	gold := map[string]bool{}
	for d := range inTrain {
		gold[d] = true
	}
	for d := range inHeld {
		gold[d] = true
	}
	var plain []*engram.Memory
	for i, d := range dia {
		if !gold[d] {
			plain = append(plain, turns[i])
		}
	}
	for range int(math.Round(mix[KindPlausible] * float64(nq))) {
		if len(held) == 0 || len(plain) == 0 || len(vocab.long) == 0 {
			break
		}
		src := plain[rng.IntN(len(plain))]
		h := topicsOf(held[rng.IntN(len(held))])
		detail := vocab.long[rng.IntN(len(vocab.long))]
		content := strings.TrimRight(src.Content, " ") + " " + plausibleWordings[rng.IntN(len(plausibleWordings))](h, detail)
		out = append(out, fake{kind: KindPlausible, m: &engram.Memory{Content: content, Category: src.Category, Tags: src.Tags,
			Type: src.Type, Context: src.Context, Data: src.Data, Source: json.RawMessage(`{"kind":"bench","name":"learning-plausible"}`)}})
	}
	return out, nil
}

// stuffedWordings are the ways a stuffed note lists its topic words.
var stuffedWordings = []func(topics []string) string{
	func(t []string) string { return "Notes to follow up on: " + strings.Join(t, ", ") + "." },
	func(t []string) string { return "Keywords: " + strings.Join(t, "; ") },
	func(t []string) string { return "Remember to ask about " + strings.Join(t, " and ") + "?" },
	func(t []string) string { return "TODO " + strings.Join(t, " / ") },
	func(t []string) string { return "Topics mentioned: " + strings.Join(t, " ") + " (see later)" },
}

// chatterWordings are small talk naming a training and a held-out
// question's topic words (t, h) and answering neither.
var chatterWordings = []func(t, h string) string{
	func(t, h string) string {
		return "haha yeah, " + t + " and " + h + " and all that, anyway how was your weekend?"
	},
	func(t, h string) string {
		return "Oh totally, we should chat about " + t + " sometime, and " + h + " too! Gotta run."
	},
	func(t, h string) string {
		return "lol I was just thinking about " + h + " the other day. Also " + t + ". Talk soon!"
	},
}

// plausibleWordings are an ordinary sentence naming a held-out question's
// topic words (h) with a detail of the conversation that answers nothing.
var plausibleWordings = []func(h, detail string) string{
	func(h, d string) string {
		return "It reminded me of the " + h + " thing, which was mostly about " + d + "."
	},
	func(h, d string) string { return "Funny enough, " + h + " came up again and it was all " + d + "." },
	func(h, d string) string {
		return "I keep thinking about " + h + "; for me it was " + d + " in the end."
	},
}

// speakersOf returns the speakers of a conversation's turns ("Speaker:
// text"), sorted.
func speakersOf(turns []*engram.Memory) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range turns {
		if s, _, ok := strings.Cut(m.Content, ": "); ok && !seen[s] && len(s) < 40 {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// questionStop are words of LoCoMo questions that name no topic.
var questionStop = map[string]bool{"what": true, "when": true, "where": true, "which": true, "who": true, "whom": true,
	"whose": true, "why": true, "how": true, "does": true, "did": true, "have": true, "has": true, "had": true, "the": true,
	"and": true, "for": true, "with": true, "that": true, "this": true, "would": true, "could": true, "likely": true,
	"about": true, "from": true, "into": true, "they": true, "their": true, "there": true, "been": true, "was": true,
	"were": true, "are": true, "kind": true, "kinds": true, "type": true, "types": true, "some": true, "many": true,
	"much": true, "her": true, "his": true, "she": true, "him": true, "after": true, "before": true, "during": true}

// words returns the lower-case topic words (three letters or more, not
// question words) of a question.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) >= 3 && !questionStop[w] {
			out = append(out, w)
		}
	}
	return out
}

// vocabulary holds the replacement words of a conversation: numbers,
// capitalised words and words of five letters or more, sorted so that a
// seed gives the same choices.
type vocabulary struct{ numbers, names, long []string }

// conversationVocab collects the vocabulary of a conversation's turns.
func conversationVocab(turns []*engram.Memory) vocabulary {
	sets := [3]map[string]bool{{}, {}, {}}
	for _, m := range turns {
		_, text, _ := strings.Cut(m.Content, ": ")
		for i, w := range strings.Fields(text) {
			w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			switch detailKind(w, i) {
			case 0:
				sets[0][w] = true
			case 1:
				sets[1][w] = true
			case 2:
				sets[2][w] = true
			}
		}
	}
	list := func(s map[string]bool) []string {
		out := make([]string, 0, len(s))
		for w := range s {
			out = append(out, w)
		}
		sort.Strings(out)
		return out
	}
	return vocabulary{numbers: list(sets[0]), names: list(sets[1]), long: list(sets[2])}
}

// detailKind classifies a word at position i of a turn's text as a
// detail: 0 a number, 1 a name (capitalised, not the first word), 2 a long
// word (five letters or more), −1 none.
func detailKind(w string, i int) int {
	if w == "" {
		return -1
	}
	r := []rune(w)
	digits := true
	for _, c := range r {
		digits = digits && unicode.IsDigit(c)
	}
	switch {
	case digits:
		return 0
	case i > 0 && unicode.IsUpper(r[0]) && len(r) >= 3:
		return 1
	case len(r) >= 5 && unicode.IsLower(r[0]):
		return 2
	}
	return -1
}

// changeDetail replaces one detail of a turn ("Speaker: text") that asked
// does not name — a number before a name before a long word — by another
// of the conversation's words of its kind.
func changeDetail(content string, asked map[string]bool, v vocabulary, rng *rand.Rand) (string, bool) {
	speaker, text, ok := strings.Cut(content, ": ")
	if !ok {
		return "", false
	}
	fields := strings.Fields(text)
	best, at := 3, -1
	for i, f := range fields {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if k := detailKind(w, i); k >= 0 && k < best && !asked[strings.ToLower(w)] {
			best, at = k, i
		}
	}
	if at < 0 {
		return "", false
	}
	pool := [][]string{v.numbers, v.names, v.long}[best]
	old := strings.TrimFunc(fields[at], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for range 8 {
		if len(pool) == 0 {
			break
		}
		if w := pool[rng.IntN(len(pool))]; w != old {
			fields[at] = strings.Replace(fields[at], old, w, 1)
			return speaker + ": " + strings.Join(fields, " "), true
		}
	}
	return "", false
}
