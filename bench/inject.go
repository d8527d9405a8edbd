package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/engram-memory/engram"
)

// The LoCoMo splits: the relevance cut's constants are fixed on the
// tuning conversations and reported on the held-out ones.
const (
	SplitTuning  = "tuning"  // conversations 0–4
	SplitHeldOut = "heldout" // conversations 5–9
)

// splitConversations returns the conversations of split.
func splitConversations(convs []locomoConversation, split string) ([]locomoConversation, error) {
	switch split {
	case "":
		return convs, nil
	case SplitTuning:
		return convs[:min(5, len(convs))], nil
	case SplitHeldOut:
		return convs[min(5, len(convs)):], nil
	}
	return nil, fmt.Errorf("locomo: unknown split %q; want %s or %s", split, SplitTuning, SplitHeldOut)
}

// InjectResult is what a set of recalls injected: how many, how many
// tokens, and what share of each question's evidence turns (context
// recall; questions without evidence do not count towards it).
type InjectResult struct {
	N             int
	Items         float64 // mean items injected
	TokensUsed    float64 // mean tokens_used
	ContextRecall float64 // mean share of evidence turns among the injected items
	withGold      int
	items, tokens float64
	recallSum     float64
}

func (r *InjectResult) add(rec *engram.Recall, gold map[string]bool, byMemory map[string]string) {
	r.N++
	r.items += float64(len(rec.Items))
	r.tokens += float64(rec.TokensUsed)
	if len(gold) == 0 {
		return
	}
	found := 0
	for _, it := range rec.Items {
		if gold[byMemory[it.ID]] {
			found++
		}
	}
	r.withGold++
	r.recallSum += float64(found) / float64(len(gold))
}

func (r *InjectResult) finish() {
	if r.N > 0 {
		r.Items, r.TokensUsed = r.items/float64(r.N), r.tokens/float64(r.N)
	}
	if r.withGold > 0 {
		r.ContextRecall = r.recallSum / float64(r.withGold)
	}
}

// traceBudget is the budget of the recall a trace records: large enough
// for every candidate, so the trace shows the whole ranking.
const traceBudget = 8000

// injectTrace is one line of a LoCoMo trace: a question and every
// candidate of a recall asked to fill traceBudget, with its evidence
// label, score, match and tokens, to study where a relevance cut falls.
type injectTrace struct {
	Conversation string        `json:"conversation"`
	Question     string        `json:"question"`
	Gold         []string      `json:"gold"` // empty for a question nothing answers
	Items        []tracedMatch `json:"items"`
}

type tracedMatch struct {
	Turn   string  `json:"turn"`
	Gold   bool    `json:"gold,omitempty"`
	Score  float64 `json:"score"`
	Match  float64 `json:"match"`
	Rel    float64 `json:"relevance"`
	Tokens int     `json:"tokens"`
	Group  string  `json:"category"`
}

// traceInjection writes q's trace line to w, when there is a w.
func traceInjection(ctx context.Context, svc Services, w io.Writer, conv, q string, gold map[string]bool, byMemory map[string]string) error {
	if w == nil {
		return nil
	}
	rec, err := svc.Recall.Recall(ctx, engram.RecallRequest{Query: q, TokenBudget: traceBudget, Fill: true})
	if err != nil {
		return fmt.Errorf("recall %q: %w", q, err)
	}
	line := injectTrace{Conversation: conv, Question: q, Gold: []string{}}
	for g := range gold {
		line.Gold = append(line.Gold, g)
	}
	sort.Strings(line.Gold)
	for _, it := range rec.Items {
		t := byMemory[it.ID]
		line.Items = append(line.Items, tracedMatch{Turn: t, Gold: gold[t], Score: it.Score, Match: it.Breakdown.Match,
			Rel: it.Breakdown.Relevance, Tokens: it.Tokens, Group: it.Category})
	}
	return json.NewEncoder(w).Encode(line)
}

// printInjection writes what the recalls injected, with the relevance
// cut and asked to fill the budget.
func (rep *LoCoMoReport) printInjection(w io.Writer, budget int) {
	split := "all conversations"
	switch rep.Split {
	case SplitTuning:
		split = "tuning split, conversations 0-4"
	case SplitHeldOut:
		split = "held-out split, conversations 5-9"
	}
	fmt.Fprintf(w, "\nInjected context at budget %d (%s): context recall = share of a question's evidence turns among the injected items\n\n", budget, split)
	row := func(name string, a, u *InjectResult) []string {
		return []string{name, f3(a.ContextRecall), fmt.Sprintf("%.1f", a.Items), fmt.Sprintf("%.0f", a.TokensUsed),
			strconv.Itoa(u.N), fmt.Sprintf("%.1f", u.Items), fmt.Sprintf("%.0f", u.TokensUsed)}
	}
	table(w, []string{"packing", "context recall", "items", "tokens_used", "unanswerable n", "items", "tokens_used"}, [][]string{
		row("relevance cut", &rep.Inject, &rep.Unanswerable),
		row("fill the budget (fill: true)", &rep.Fill, &rep.UnanswerableFill),
	})
}
