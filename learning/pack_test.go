package learning

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/tokens"
)

const testHeader = "[Agent Memory]"

var (
	cl100kOnce sync.Once
	cl100k     *tokens.Tokenizer
	cl100kErr  error
)

// testTokenizer returns one cl100k_base Tokenizer for all tests, since
// building it parses the whole rank table.
func testTokenizer(tb testing.TB) *tokens.Tokenizer {
	tb.Helper()
	cl100kOnce.Do(func() { cl100k, cl100kErr = tokens.New("cl100k_base") })
	if cl100kErr != nil {
		tb.Fatal(cl100kErr)
	}
	return cl100k
}

// mem returns a memory with the given id, category and texts.
func mem(id, category, content, summary string) *engram.Memory {
	return &engram.Memory{ID: id, Key: "/k/" + id, Category: category, Content: content, Summary: summary, Version: 1}
}

func TestLines(t *testing.T) {
	m := &engram.Memory{ID: "m1", Key: "/user/preference/style", Type: "constraint", Category: "preference"}
	bare := &engram.Memory{ID: "m2", Category: "work"}
	tests := []struct {
		name string
		line LineFunc
		m    *engram.Memory
		text string
		want string
	}{
		{"recall plain", RecallLine, m, "likes short answers", "- likes short answers"},
		{"recall folds", RecallLine, m, "  line one\r\n\tline two\n\n三  ", "- line one line two 三"},
		{"context key and type", ContextLine, m, "short answers\nplease", "- /user/preference/style constraint short answers please"},
		{"context id and category", ContextLine, bare, "咖啡", "- m2 work 咖啡"},
		{"context empty text", ContextLine, bare, " ", "- m2 work"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.line(tt.m, tt.text); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInjectionGroup(t *testing.T) {
	tests := []struct {
		category, typ string
		reward        float64
		want          int
	}{
		{"preference", "", 0, GroupPreference},
		{"work", "constraint", 0.1, GroupPreference},
		{"life", "Preference", 0.9, GroupPreference},
		{"strategy", "", 0.5, GroupStrategy},
		{"strategy", "", 0.9, GroupStrategy},
		{"strategy", "", 0.49, GroupExperience},
		{"work", "", 1, GroupExperience},
		{"kb", "fact", 1, GroupExperience},
	}
	for _, tt := range tests {
		m := &engram.Memory{Category: tt.category, Type: tt.typ}
		if got := InjectionGroup(m, engram.ScoreBreakdown{Reward: tt.reward}); got != tt.want {
			t.Errorf("InjectionGroup(%s/%s, reward %v) = %d, want %d", tt.category, tt.typ, tt.reward, got, tt.want)
		}
	}
}

func TestPack(t *testing.T) {
	tok := testTokenizer(t)
	p := NewPacker(tok, testHeader)
	long := strings.Repeat("The deployment checklist has many steps that must be followed in order. ", 40)
	lineTokens := func(text string) int { return tok.Count(RecallLine(nil, text)) }
	base := tok.Count(testHeader) + tok.Count("\n")

	tests := []struct {
		name   string
		cands  []Candidate
		budget int
		want   []string // ids, in order
		sums   []bool   // UsedSummary per item
		ctx    string   // exact context, when set
	}{
		{
			name:   "summary replaces content that does not fit",
			cands:  []Candidate{{Memory: mem("a", "work", long, "Follow the deployment checklist in order.")}},
			budget: base + lineTokens("Follow the deployment checklist in order.") + 5,
			want:   []string{"a"},
			sums:   []bool{true},
			ctx:    testHeader + "\n- Follow the deployment checklist in order.",
		},
		{
			name: "large memory skipped, later small one fits",
			cands: []Candidate{
				{Memory: mem("big", "work", long, ""), Breakdown: engram.ScoreBreakdown{Score: 0.9}},
				{Memory: mem("small", "work", "User drinks coffee black.", ""), Breakdown: engram.ScoreBreakdown{Score: 0.1}},
			},
			budget: 60,
			want:   []string{"small"},
			sums:   []bool{false},
			ctx:    testHeader + "\n- User drinks coffee black.",
		},
		{
			name: "preferences, then strategies, then the rest",
			cands: []Candidate{
				{Memory: mem("exp", "work", "Deployed v2 on Friday.", ""), Breakdown: engram.ScoreBreakdown{Score: 0.9}, Group: GroupExperience},
				{Memory: mem("strat", "strategy", "Ask before refactoring.", ""), Breakdown: engram.ScoreBreakdown{Score: 0.5}, Group: GroupStrategy},
				{Memory: mem("pref2", "preference", "回答要简短。", ""), Breakdown: engram.ScoreBreakdown{Score: 0.2}, Group: GroupPreference},
				{Memory: mem("pref1", "preference", "No emoji.", ""), Breakdown: engram.ScoreBreakdown{Score: 0.3}, Group: GroupPreference},
			},
			budget: 1000,
			want:   []string{"pref1", "pref2", "strat", "exp"},
			sums:   []bool{false, false, false, false},
			ctx:    testHeader + "\n- No emoji.\n- 回答要简短。\n- Ask before refactoring.\n- Deployed v2 on Friday.",
		},
		{
			name: "equal scores keep their order, duplicates are packed once",
			cands: []Candidate{
				{Memory: mem("x", "work", "first", "")},
				{Memory: mem("y", "work", "second", "")},
				{Memory: mem("x", "work", "first again", "")},
				{Memory: nil},
			},
			budget: 100,
			want:   []string{"x", "y"},
			sums:   []bool{false, false},
		},
		{
			name:   "no candidates",
			budget: 100,
		},
		{
			name:   "budget holds only the header",
			cands:  []Candidate{{Memory: mem("a", "work", "hi", "")}},
			budget: base,
		},
		{
			name:   "zero budget",
			cands:  []Candidate{{Memory: mem("a", "work", "hi", "")}},
			budget: 0,
		},
		{
			name:   "nothing fits",
			cands:  []Candidate{{Memory: mem("a", "work", long, long[:200])}},
			budget: 30,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, items, used := p.Pack(tt.cands, tt.budget, nil)
			if n := tok.Count(ctx); n != used || n > tt.budget {
				t.Fatalf("context of %d tokens, reported %d, budget %d", n, used, tt.budget)
			}
			if len(tt.want) == 0 {
				if ctx != "" || items != nil || used != 0 {
					t.Fatalf("Pack = %q, %v, %d; want empty", ctx, items, used)
				}
				return
			}
			var ids []string
			var sums []bool
			for _, it := range items {
				ids = append(ids, it.ID)
				sums = append(sums, it.UsedSummary)
			}
			if !slices.Equal(ids, tt.want) || !slices.Equal(sums, tt.sums) {
				t.Fatalf("items %v (summaries %v), want %v (%v)", ids, sums, tt.want, tt.sums)
			}
			if tt.ctx != "" && ctx != tt.ctx {
				t.Fatalf("context %q, want %q", ctx, tt.ctx)
			}
		})
	}
}

func TestPackItemFields(t *testing.T) {
	tok := testTokenizer(t)
	m := &engram.Memory{ID: "m1", Key: "/user/style", Category: "preference", Type: "constraint", Version: 7, Content: "Keep it short."}
	b := engram.ScoreBreakdown{Relevance: 1, Reward: 0.5, Confidence: 1, Retention: 1, Revision: 1, Score: 0.5}
	ctx, items, used := NewPacker(tok, testHeader).Pack([]Candidate{{Memory: m, Breakdown: b}}, 100, ContextLine)
	want := engram.RecallItem{ID: "m1", Key: "/user/style", Category: "preference", Version: 7, Text: "Keep it short.",
		Tokens: tok.Count("- /user/style constraint Keep it short."), Score: 0.5, Breakdown: b}
	if len(items) != 1 || !reflect.DeepEqual(items[0], want) {
		t.Fatalf("items %+v, want [%+v]", items, want)
	}
	if ctx != testHeader+"\n- /user/style constraint Keep it short." || used != tok.Count(ctx) {
		t.Fatalf("context %q of %d tokens", ctx, used)
	}
}

func TestPackNoHeader(t *testing.T) {
	tok := testTokenizer(t)
	cands := []Candidate{{Memory: mem("a", "work", "one", "")}, {Memory: mem("b", "work", "two", "")}}
	ctx, items, used := NewPacker(tok, "").Pack(cands, tok.Count("- one\n- two"), nil)
	if ctx != "- one\n- two" || len(items) != 2 || used != tok.Count(ctx) {
		t.Fatalf("Pack = %q, %d items, %d tokens", ctx, len(items), used)
	}
}

// lumpyCounter counts runes plus the square of the line breaks, so the
// count of a joined text exceeds the sum of its parts: what the final
// re-count of Pack exists for.
type lumpyCounter struct{}

func (lumpyCounter) Count(s string) int {
	n := strings.Count(s, "\n")
	return utf8.RuneCountInString(s) + n*n
}

func (lumpyCounter) Encoding() string { return "lumpy" }

func TestPackRecountDropsLines(t *testing.T) {
	var tok lumpyCounter
	var cands []Candidate
	for i := range 6 {
		cands = append(cands, Candidate{Memory: mem(fmt.Sprint(i), "work", "abcd", "")})
	}
	// The lines cost 6 runes plus a 2-token separator each by the sum of
	// parts, so all six "fit" 48 tokens; joined, five line breaks add 25.
	budget := 48
	ctx, items, used := NewPacker(tok, "").Pack(cands, budget, nil)
	if used > budget || tok.Count(ctx) != used {
		t.Fatalf("context of %d tokens (reported %d), budget %d", tok.Count(ctx), used, budget)
	}
	if len(items) >= 6 || len(items) == 0 {
		t.Fatalf("%d items: want the re-count to drop some, not all", len(items))
	}
	if want := strings.Repeat("- abcd\n", len(items)-1) + "- abcd"; ctx != want {
		t.Fatalf("context %q, want %q", ctx, want)
	}
}

// Text fragments for random memories: Chinese, English, emoji, and the
// white space that RecallLine folds.
var (
	zhParts = []string{"我喜欢喝咖啡", "下周三去看牙科", "用户偏好简短的回答", "部署之前先跑测试", "不要在周末打电话",
		"项目截止日期是五月", "他对花生过敏", "会议改到下午三点", "。", "，", "！"}
	enParts = []string{"The user prefers concise answers", "deploy only after the tests pass", "coffee, black",
		"dentist appointment next Wednesday", "avoid calling on weekends", "the build uses Go 1.26", ".", ",", "!"}
	emoji  = []string{"😀", "🚀", "☕️", "👍🏽", "🇨🇳"}
	spaces = []string{" ", "\n", "\r\n", "\t", "  ", "\n\n"}
)

func randomText(r *rand.Rand, parts int) string {
	var b strings.Builder
	for range parts {
		switch k := r.IntN(10); {
		case k < 4:
			b.WriteString(zhParts[r.IntN(len(zhParts))])
		case k < 8:
			b.WriteString(enParts[r.IntN(len(enParts))])
		case k < 9:
			b.WriteString(emoji[r.IntN(len(emoji))])
		default:
			b.WriteString(spaces[r.IntN(len(spaces))])
		}
		if r.IntN(3) == 0 {
			b.WriteString(spaces[r.IntN(len(spaces))])
		}
	}
	return b.String()
}

var (
	testCategories = []string{"work", "life", "preference", "emotion", "strategy", "kb"}
	testTypes      = []string{"", "", "", "constraint", "preference", "fact", "episode"}
)

// randomCandidates returns n candidates, some long, some with summaries
// (which may be blank), grouped by InjectionGroup, with token counts
// stored as the store would unless tok is nil.
func randomCandidates(r *rand.Rand, n int, tok engram.TokenCounter) []Candidate {
	cands := make([]Candidate, n)
	for i := range cands {
		parts := 1 + r.IntN(12)
		if r.IntN(8) == 0 {
			parts = 40 + r.IntN(160)
		}
		// The store refuses blank content, so every memory has a word.
		content := randomText(r, parts) + enParts[r.IntN(len(enParts))]
		m := mem(fmt.Sprintf("m%d", i), testCategories[r.IntN(len(testCategories))], content, "")
		m.Type = testTypes[r.IntN(len(testTypes))]
		if r.IntN(2) == 0 {
			m.Summary = randomText(r, 1+r.IntN(4))
		}
		if tok != nil {
			m.TokenCount, m.SummaryTokenCount = tok.Count(m.Content), tok.Count(m.Summary)
		}
		b := engram.ScoreBreakdown{Reward: r.Float64(), Score: r.Float64()}
		if r.IntN(10) == 0 {
			b.Score = 0.5 // ties
		}
		cands[i] = Candidate{Memory: m, Breakdown: b, Group: InjectionGroup(m, b)}
	}
	return cands
}

func TestPackProperties(t *testing.T) {
	tok := testTokenizer(t)
	p := NewPacker(tok, testHeader)
	tooSmall := tok.Count(testHeader) + tok.Count("\n") + 1
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 300 {
		cands := randomCandidates(r, r.IntN(30), tok)
		byID := make(map[string]Candidate, len(cands))
		for _, c := range cands {
			byID[c.Memory.ID] = c
		}
		line := RecallLine
		if r.IntN(3) == 0 {
			line = ContextLine
		}
		budget := r.IntN(3001)
		if i%20 == 0 {
			budget = r.IntN(tooSmall + 1)
		}
		ctx, items, used := p.Pack(cands, budget, line)

		// Skipping texts by their stored counts must not change the
		// result; checked on every fourth case to keep the test quick.
		if i%4 == 0 {
			uncounted := make([]Candidate, len(cands))
			for j, c := range cands {
				m := *c.Memory
				m.TokenCount, m.SummaryTokenCount = 0, 0
				uncounted[j] = Candidate{Memory: &m, Breakdown: c.Breakdown, Group: c.Group}
			}
			if ctx2, items2, used2 := p.Pack(uncounted, budget, line); ctx2 != ctx || used2 != used || !reflect.DeepEqual(items2, items) {
				t.Fatalf("case %d: stored counts changed the pack:\n%q\nwithout them:\n%q", i, ctx, ctx2)
			}
		}

		if n := tok.Count(ctx); n > budget || n != used {
			t.Fatalf("case %d: context of %d tokens, reported %d, budget %d", i, n, used, budget)
		}
		if budget <= tooSmall && (ctx != "" || items != nil) {
			t.Fatalf("case %d: budget %d cannot hold a line, got %q", i, budget, ctx)
		}
		if len(items) == 0 {
			if ctx != "" || items != nil || used != 0 {
				t.Fatalf("case %d: no items but context %q, %d tokens", i, ctx, used)
			}
			continue
		}
		lines := strings.Split(ctx, "\n")
		if lines[0] != testHeader || len(lines) != len(items)+1 {
			t.Fatalf("case %d: %d lines for %d items in %q", i, len(lines), len(items), ctx)
		}
		for j, it := range items {
			c := byID[it.ID]
			m := c.Memory
			if it.Text != m.Content && it.Text != m.Summary || it.UsedSummary != (it.Text != m.Content) {
				t.Fatalf("case %d: item %s text %q is neither content nor summary (summary %v)", i, it.ID, it.Text, it.UsedSummary)
			}
			if lines[j+1] != line(m, it.Text) || i%4 == 0 && it.Tokens != tok.Count(lines[j+1]) {
				t.Fatalf("case %d: line %q (%d tokens) for item %+v", i, lines[j+1], it.Tokens, it)
			}
			if j > 0 {
				prev := byID[items[j-1].ID]
				if prev.Group > c.Group || prev.Group == c.Group && prev.Breakdown.Score < c.Breakdown.Score {
					t.Fatalf("case %d: item %s (group %d, score %v) after %s (group %d, score %v)", i,
						it.ID, c.Group, c.Breakdown.Score, items[j-1].ID, prev.Group, prev.Breakdown.Score)
				}
			}
		}
	}
}

func TestPackLargeBudgetTakesAll(t *testing.T) {
	tok := testTokenizer(t)
	p := NewPacker(tok, testHeader)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 30 {
		cands := randomCandidates(r, 1+r.IntN(30), tok)
		ctx, items, used := p.Pack(cands, 1<<20, RecallLine)
		if len(items) != len(cands) || used != tok.Count(ctx) {
			t.Fatalf("case %d: %d of %d candidates packed", i, len(items), len(cands))
		}
		for _, it := range items {
			if it.UsedSummary {
				t.Fatalf("case %d: item %s used its summary with room to spare", i, it.ID)
			}
		}
	}
}

func BenchmarkPack(b *testing.B) {
	tok := testTokenizer(b)
	p := NewPacker(tok, testHeader)
	cands := randomCandidates(rand.New(rand.NewPCG(9, 10)), 50, tok)
	for _, budget := range []int{500, 2000} {
		b.Run(fmt.Sprintf("budget=%d", budget), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Pack(cands, budget, RecallLine)
			}
		})
	}
}
