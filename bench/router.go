package bench

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/engram-memory/engram"
)

// RouterSets are the router's evaluation sets, in the order a report
// shows them: labelled.jsonl, written before the rules and tuned on;
// tuned.jsonl, once a held-out set, since read while widening the word
// lists and so tuned on too; heldout.jsonl, written later without reading
// the rules and held out for one round of changes, then used to check the
// generalised cue classes (by its counts of misses of each kind) and
// then, with its misses read, to widen the topic vocabulary: tuning data; heldout2.jsonl, written from scratch
// without reading the rules or the other sets, frozen before the next
// change to the router (its hash is pinned by TestHeldout2Frozen) and never
// read while tuning. Only heldout2.jsonl measures how the router does on
// queries nobody tuned for.
var RouterSets = []string{"labelled.jsonl", "tuned.jsonl", "heldout.jsonl", "heldout2.jsonl"}

//go:embed data/router/*.jsonl
var routerData embed.FS

// LoadRouterSet reads one of RouterSets, compiled into the binary so that
// the benchmark runs from any directory.
func LoadRouterSet(name string) ([]LabelledQuery, error) {
	data, err := routerData.ReadFile("data/router/" + name)
	if err != nil {
		return nil, fmt.Errorf("bench: router set %q: %w", name, err)
	}
	return parseLabelled(name, data)
}

// LabelledQuery is one query of an evaluation set with its expected intent,
// mode and best domain.
type LabelledQuery struct {
	Query  string        `json:"query"`
	Intent engram.Intent `json:"intent"`
	Mode   engram.Mode   `json:"mode"`
	Domain string        `json:"domain"`
}

// LoadLabelled reads a JSON Lines file of LabelledQuery, skipping blank
// lines. A malformed or incomplete line is EINVALID.
func LoadLabelled(path string) ([]LabelledQuery, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench: read labelled queries: %w", err)
	}
	return parseLabelled(path, data)
}

func parseLabelled(path string, data []byte) ([]LabelledQuery, error) {
	var items []LabelledQuery
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var q LabelledQuery
		if err := json.Unmarshal(line, &q); err != nil {
			return nil, engram.Errorf(engram.EINVALID, "%s:%d: %v", path, n, err)
		}
		if strings.TrimSpace(q.Query) == "" || q.Domain == "" ||
			!slices.Contains([]engram.Intent{engram.IntentAsk, engram.IntentDecide, engram.IntentReflect}, q.Intent) ||
			!slices.Contains([]engram.Mode{engram.ModeFactual, engram.ModeExploratory, engram.ModeTemporal, engram.ModeCausal}, q.Mode) {
			return nil, engram.Errorf(engram.EINVALID, "%s:%d: need query, domain, a known intent and a known mode", path, n)
		}
		items = append(items, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bench: scan labelled queries: %w", err)
	}
	return items, nil
}

// Accuracy is the share of N queries whose intent, mode, best domain, and
// one of two best domains the router got right.
type Accuracy struct {
	N          int     `json:"n"`
	Intent     float64 `json:"intent"`
	Mode       float64 `json:"mode"`
	DomainTop1 float64 `json:"domain_top1"`
	DomainTop2 float64 `json:"domain_top2"`
}

// Miss is a query the router got wrong in at least one respect.
type Miss struct {
	Item  LabelledQuery `json:"item"`
	Route engram.Route  `json:"route"`
}

// Report is the result of Evaluate: accuracy over all queries and per
// language ("en", "zh": a query with any Han character is Chinese).
type Report struct {
	Accuracy
	ByLanguage map[string]Accuracy `json:"by_language"`
	Misses     []Miss              `json:"misses"`
}

// EvaluateRouter routes every item through r for the tenant in ctx and
// scores the routes.
func EvaluateRouter(ctx context.Context, r engram.RouterService, items []LabelledQuery) (Report, error) {
	type tally struct{ n, intent, mode, top1, top2 int }
	all := &tally{}
	byLang := map[string]*tally{}
	var misses []Miss
	for _, it := range items {
		route, err := r.RouteQuery(ctx, it.Query)
		if err != nil {
			return Report{}, err
		}
		rt := *route
		lang := "en"
		if strings.IndexFunc(it.Query, isHan) >= 0 {
			lang = "zh"
		}
		if byLang[lang] == nil {
			byLang[lang] = &tally{}
		}
		intentOK, modeOK := rt.Intent == it.Intent, rt.Mode == it.Mode
		top1 := len(rt.Domains) > 0 && rt.Domains[0].Name == it.Domain
		top2 := top1 || len(rt.Domains) > 1 && rt.Domains[1].Name == it.Domain
		for _, t := range []*tally{all, byLang[lang]} {
			t.n++
			t.intent += b2i(intentOK)
			t.mode += b2i(modeOK)
			t.top1 += b2i(top1)
			t.top2 += b2i(top2)
		}
		if !intentOK || !modeOK || !top1 {
			misses = append(misses, Miss{Item: it, Route: rt})
		}
	}
	acc := func(t *tally) Accuracy {
		if t.n == 0 {
			return Accuracy{}
		}
		n := float64(t.n)
		return Accuracy{N: t.n, Intent: float64(t.intent) / n, Mode: float64(t.mode) / n,
			DomainTop1: float64(t.top1) / n, DomainTop2: float64(t.top2) / n}
	}
	rep := Report{Accuracy: acc(all), ByLanguage: map[string]Accuracy{}, Misses: misses}
	for lang, t := range byLang {
		rep.ByLanguage[lang] = acc(t)
	}
	return rep, nil
}

// String renders the report as a table: one row for all queries, then one
// per language.
func (rep Report) String() string {
	var b strings.Builder
	row := func(name string, a Accuracy) {
		fmt.Fprintf(&b, "%-6s %5d %8.3f %8.3f %8.3f %8.3f\n", name, a.N, a.Intent, a.Mode, a.DomainTop1, a.DomainTop2)
	}
	fmt.Fprintf(&b, "%-6s %5s %8s %8s %8s %8s\n", "set", "n", "intent", "mode", "dom@1", "dom@2")
	row("all", rep.Accuracy)
	langs := make([]string, 0, len(rep.ByLanguage))
	for l := range rep.ByLanguage {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	for _, l := range langs {
		row(l, rep.ByLanguage[l])
	}
	return b.String()
}

func b2i(ok bool) int {
	if ok {
		return 1
	}
	return 0
}

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }
