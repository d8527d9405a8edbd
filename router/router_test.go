package router

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

func TestRoute(t *testing.T) {
	tests := []struct {
		query      string
		intent     engram.Intent
		mode       engram.Mode
		top        string
		categories []string // must all be present
		absent     []string
		layers     []string
	}{
		{"when is my dentist appointment", engram.IntentAsk, engram.ModeTemporal, "life",
			[]string{"life"}, []string{"kb"}, []string{"L2"}},
		{"what did my boss say about the project deadline", engram.IntentAsk, engram.ModeFactual, "work",
			[]string{"work", "kb"}, []string{"emotion"}, []string{"L2"}},
		{"should I take the job offer or stay on my team", engram.IntentDecide, engram.ModeFactual, "work",
			[]string{"work", "preference", "strategy"}, nil, []string{"L2"}},
		{"what have I learned from my mistakes at work", engram.IntentReflect, engram.ModeExploratory, "work",
			[]string{"work"}, []string{"kb"}, []string{"L2", "L3"}},
		{"why do I feel so anxious lately", engram.IntentAsk, engram.ModeCausal, "emotion",
			[]string{"emotion"}, []string{"kb"}, []string{"L2"}},
		{"book a dinner spot, I'm allergic to peanuts", engram.IntentAsk, engram.ModeFactual, "preference",
			[]string{"preference"}, nil, []string{"L2"}},
		{"去年国庆我们去哪旅行了", engram.IntentAsk, engram.ModeTemporal, "life",
			[]string{"life"}, nil, []string{"L2"}},
		{"我应该先做哪个项目", engram.IntentDecide, engram.ModeFactual, "work",
			[]string{"work", "preference", "strategy"}, nil, []string{"L2"}},
		{"反思一下最近的焦虑", engram.IntentReflect, engram.ModeTemporal, "emotion",
			[]string{"emotion"}, nil, []string{"L2", "L3"}},
		{"为什么我总是拖延，有什么方法", engram.IntentAsk, engram.ModeCausal, "strategy",
			[]string{"strategy"}, nil, []string{"L2"}},
		{"我不吃辣，帮我点个外卖", engram.IntentAsk, engram.ModeFactual, "preference",
			[]string{"preference"}, nil, []string{"L2"}},
	}
	r := New(DefaultConfig())
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := r.Route("t1", tt.query)
			if got.Intent != tt.intent || got.Mode != tt.mode || got.Domains[0].Name != tt.top {
				t.Errorf("got %s/%s/%s, want %s/%s/%s", got.Intent, got.Mode, got.Domains[0].Name, tt.intent, tt.mode, tt.top)
			}
			for _, c := range tt.categories {
				if !slices.Contains(got.Categories, c) {
					t.Errorf("categories %v lack %q", got.Categories, c)
				}
			}
			for _, c := range tt.absent {
				if slices.Contains(got.Categories, c) {
					t.Errorf("categories %v contain %q", got.Categories, c)
				}
			}
			if !slices.Equal(got.Layers, tt.layers) {
				t.Errorf("layers %v, want %v", got.Layers, tt.layers)
			}
			checkRoute(t, got)
		})
	}
}

// checkRoute asserts the invariants every route keeps.
func checkRoute(t *testing.T, rt engram.Route) {
	t.Helper()
	if len(rt.Categories) == 0 {
		t.Errorf("no categories")
	}
	if len(rt.Layers) == 0 || rt.Layers[0] != engram.LayerL2 {
		t.Errorf("layers %v do not start with L2", rt.Layers)
	}
	var sum float64
	for i, d := range rt.Domains {
		if d.Score < 0 || d.Score > 1 || math.IsNaN(d.Score) {
			t.Errorf("domain %s score %v out of [0,1]", d.Name, d.Score)
		}
		if i > 0 && d.Score > rt.Domains[i-1].Score {
			t.Errorf("domains not sorted best first: %v", rt.Domains)
		}
		sum += d.Score
	}
	if math.Abs(sum-1) > 0.001 {
		t.Errorf("domain scores sum to %v: %v", sum, rt.Domains)
	}
}

func TestFallbackToAllCategories(t *testing.T) {
	r := New(DefaultConfig())
	got := r.Route("t", "qwertz zxcv")
	if !slices.Equal(got.Categories, engram.DefaultCategories) {
		t.Errorf("unknown words route to %v, want all categories", got.Categories)
	}
	checkRoute(t, got)
}

func TestNewDefaults(t *testing.T) {
	r := New(Config{Categories: []string{" work ", "", "work", "kb", "health"}, Threshold: 2})
	want := DefaultConfig()
	want.Categories = []string{"work", "kb", "health"}
	if !slices.Equal(r.cfg.Categories, want.Categories) || r.cfg.Threshold != want.Threshold ||
		r.cfg.MaxCategories != want.MaxCategories || r.cfg.PriorWeight != want.PriorWeight {
		t.Errorf("config %+v, want %+v", r.cfg, want)
	}
	if !slices.Equal(r.domains, []string{"work", "health"}) {
		t.Errorf("domains %v, want work and health (kb is not a domain)", r.domains)
	}
	if got := New(Config{}).cfg.Categories; !slices.Equal(got, engram.DefaultCategories) {
		t.Errorf("zero config categories %v", got)
	}
}

// Queries whose words no lexicon knows, and whose one known word points to
// the wrong domain, until the tenant's own memories teach the router.
var learningCases = []struct {
	query string
	wrong string
	docs  map[string][]string
}{
	{
		query: "What's the status of the Falcon cutover this weekend?",
		wrong: "life",
		docs: map[string][]string{
			"work": {
				"Falcon migration moved to Postgres 16 after the load test",
				"Falcon cutover is scheduled for Saturday night, Dana runs the runbook",
				"Status of Falcon: schema frozen, backfill 80% done",
				"Falcon rollback needs sign-off from the platform group",
				"The Falcon cutover checklist lives in the ops wiki",
				"Weekly Falcon sync moved to Thursdays",
			},
			"life": {
				"Dinner with my parents on Sunday at the Thai place",
				"Dentist appointment moved to the 14th",
			},
		},
	},
	{
		query: "北极星的灰度这周末能放完吗",
		wrong: "life",
		docs: map[string][]string{
			"work": {
				"北极星灰度放量到30%，监控正常",
				"北极星周五封版，周末值班表已排好",
				"灰度期间的告警要在群里同步",
				"北极星接口延迟超标，回滚了一次",
				"北极星的灰度方案已经评审通过",
			},
			"life": {
				"周日带爸妈去公园散步",
				"牙科复诊改到下个月",
			},
		},
	},
}

func TestLearningFromTenantMemories(t *testing.T) {
	for _, tc := range learningCases {
		t.Run(tc.query, func(t *testing.T) {
			r := New(DefaultConfig())
			before := r.Route("acme", tc.query)
			if before.Domains[0].Name != tc.wrong {
				t.Fatalf("empty tenant routes %q to %v, want %s first", tc.query, before.Domains, tc.wrong)
			}
			for cat, texts := range tc.docs {
				for _, text := range texts {
					r.Observe("acme", cat, text)
				}
			}
			after := r.Route("acme", tc.query)
			t.Logf("before %v %v\nafter  %v %v", before.Domains[:2], before.Categories, after.Domains[:2], after.Categories)
			if after.Domains[0].Name != "work" || after.Categories[0] != "work" {
				t.Errorf("after learning, %q routes to %v (categories %v), want work first", tc.query, after.Domains, after.Categories)
			}
			checkRoute(t, after)
			if other := r.Route("globex", tc.query); !slices.Equal(other.Domains, before.Domains) {
				t.Errorf("tenant globex sees acme's memories: %v, want %v", other.Domains, before.Domains)
			}
		})
	}
}

func TestLearningExtraCategory(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Categories = append(cfg.Categories, "garden")
	r := New(cfg)
	for _, text := range []string{"Tomatoes need watering every morning", "Planted basil and tomatoes in the raised bed",
		"Aphids on the roses, try neem oil", "Compost the tomato vines in October"} {
		r.Observe("t", "garden", text)
	}
	r.Observe("t", "kb", "Tomatoes are fruit botanically") // kb is not learned
	r.Observe("t", "unknown", "tomatoes tomatoes")         // nor an unconfigured category
	got := r.Route("t", "how are my tomatoes doing")
	if got.Domains[0].Name != "garden" {
		t.Errorf("domains %v, want garden first", got.Domains)
	}
	if m := r.tenants["t"]; m.docs != 4 {
		t.Errorf("model holds %d documents, want 4", m.docs)
	}
}

func TestQuestionWordsAreNotLearned(t *testing.T) {
	r := New(DefaultConfig())
	for _, text := range []string{"什么时候开始焦虑的", "为什么一下子这么难过", "why was I so sad when it rained"} {
		r.Observe("t", "emotion", text)
	}
	for _, q := range []string{"周报什么时候交", "why did the deploy fail"} {
		if got := r.Route("t", q); got.Domains[0].Name != "work" {
			t.Errorf("%q routes to %v: question words were learned as emotion", q, got.Domains)
		}
	}
}

func TestForgetUndoesObserve(t *testing.T) {
	r := New(DefaultConfig())
	r.Observe("t", "life", "Grandma's garden party is every June")
	pristine := r.Route("t", "Falcon cutover plans")
	snapshot := fmt.Sprint(*r.tenants["t"])
	docs := []string{"Falcon cutover on Saturday", "Falcon plans approved by the CTO", "Falcon Falcon Falcon"}
	for _, d := range docs {
		r.Observe("t", "work", d)
	}
	if got := r.Route("t", "Falcon cutover plans"); slices.Equal(got.Domains, pristine.Domains) {
		t.Fatalf("observing changed nothing: %v", got.Domains)
	}
	for _, d := range docs {
		r.Forget("t", "work", d)
	}
	if got := r.Route("t", "Falcon cutover plans"); !slices.Equal(got.Domains, pristine.Domains) {
		t.Errorf("after forgetting: %v, want %v", got.Domains, pristine.Domains)
	}
	if got := fmt.Sprint(*r.tenants["t"]); got != snapshot {
		t.Errorf("model after forgetting %s, want %s", got, snapshot)
	}
	r.Forget("t", "work", "never observed")
	r.Forget("t", "life", "grandma never had a garden")
	r.Forget("nobody", "work", "no such tenant")
	if got := fmt.Sprint(*r.tenants["t"]); got != snapshot {
		t.Errorf("forgetting what was never observed changed the model: %s, want %s", got, snapshot)
	}
	if r.tenants["nobody"] != nil {
		t.Error("Forget created a tenant")
	}
}

func TestBadInput(t *testing.T) {
	r := New(DefaultConfig())
	r.Observe("t", "work", "deploy the billing service")
	inputs := map[string]string{
		"empty":         "",
		"whitespace":    " \t\n　",
		"emoji":         "😀🎉🔥",
		"punctuation":   "?!...,;:—「」",
		"sql":           "'; DROP TABLE x; --",
		"operators":     `"AND" * -`,
		"invalid utf-8": "\xff\xfe\xfd",
		"nul":           "a\x00b",
		"100 KB":        strings.Repeat("why did the meeting run late 为什么会议拖堂 ", 2500),
		"100 KB one":    strings.Repeat("x", 100<<10),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			got := r.Route("t", in)
			checkRoute(t, got)
			r.Observe("t", "work", in)
			r.Forget("t", "work", in)
		})
	}
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("会议", MaxQueryRunes)
	if got := []rune(truncate(long, MaxQueryRunes)); len(got) != MaxQueryRunes {
		t.Errorf("truncated to %d runes, want %d", len(got), MaxQueryRunes)
	}
	if got := truncate("short", MaxQueryRunes); got != "short" {
		t.Errorf("truncate(short) = %q", got)
	}
}

func TestNormalize(t *testing.T) {
	tests := map[string]string{
		"Should I？":          " should i ",
		"don't  EAT":         " dont eat ",
		"周报里的OKR怎么写":         " 周报里的 okr 怎么写 ",
		"ＷＨＹ，为什么":            " why 为什么 ",
		"":                   " ",
		"café—tell me about": " café tell me about ",
	}
	for in, want := range tests {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLexiconEntriesAnalyse(t *testing.T) {
	n := 0
	for domain, cs := range domainLexicon {
		seen := map[string]string{}
		for _, c := range cs {
			key := strings.Join(analysis.Terms(c.text), " ")
			if first, dup := seen[key]; dup {
				t.Errorf("%s: %q and %q analyse alike and would count twice", domain, first, c.text)
			}
			seen[key] = c.text
			if len(lexiconMatches(analysis.Terms(c.text))) == 0 {
				t.Errorf("%s: entry %q matches nothing after analysis", domain, c.text)
			}
			n++
		}
	}
	for _, tbl := range [][]rule[string]{asStrings(intentRules), asStrings(modeRules)} {
		for _, r := range tbl {
			seen := map[string]bool{}
			for _, c := range r.cues {
				if seen[c.text] {
					t.Errorf("%s: cue %q listed twice", r.label, c.text)
				}
				seen[c.text] = true
			}
		}
	}
	t.Logf("%d lexicon entries", n)
}

func asStrings[T ~string](rules []rule[T]) []rule[string] {
	out := make([]rule[string], len(rules))
	for i, r := range rules {
		out[i] = rule[string]{label: string(r.label), cues: r.cues}
	}
	return out
}

// fakeFeed is an in-memory change feed: per tenant, the live memories a
// snapshot sees and the changes after it.
type fakeFeed struct {
	mu      sync.Mutex
	loads   map[string]int
	reads   map[string]int
	live    map[string][]*engram.Memory
	changes map[string][]*engram.Change
	err     error
}

func newFakeFeed() *fakeFeed {
	return &fakeFeed{loads: map[string]int{}, reads: map[string]int{}, live: map[string][]*engram.Memory{},
		changes: map[string][]*engram.Change{}}
}

func (f *fakeFeed) EachLive(ctx context.Context, fn func(*engram.Memory) error) (int64, error) {
	tenant := engram.TenantFromContext(ctx)
	f.mu.Lock()
	f.loads[tenant]++
	err, live, head := f.err, f.live[tenant], int64(len(f.changes[tenant]))
	f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	for _, m := range live {
		if err := fn(m); err != nil {
			return 0, err
		}
	}
	return head, nil
}

func (f *fakeFeed) Changes(ctx context.Context, after int64, limit int) ([]*engram.Change, error) {
	tenant := engram.TenantFromContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[tenant]++
	if f.err != nil {
		return nil, f.err
	}
	all := f.changes[tenant]
	if after >= int64(len(all)) {
		return nil, nil
	}
	return all[after:min(int64(len(all)), after+int64(limit))], nil
}

// StateChanges is Changes: the fake's feed holds no credits.
func (f *fakeFeed) StateChanges(ctx context.Context, after int64, limit int) ([]*engram.Change, error) {
	return f.Changes(ctx, after, limit)
}

// write appends a change of tenant's memory id from before to after.
func (f *fakeFeed) write(tenant string, before, after *engram.Memory) {
	f.mu.Lock()
	defer f.mu.Unlock()
	seq := int64(len(f.changes[tenant]) + 1)
	f.changes[tenant] = append(f.changes[tenant], &engram.Change{Seq: seq, Before: before, After: after})
}

func mem(category, content string) *engram.Memory {
	return &engram.Memory{Category: category, Content: content, Valid: true}
}

func TestService(t *testing.T) {
	feed := newFakeFeed()
	for cat, texts := range learningCases[0].docs {
		for _, text := range texts {
			feed.live["acme"] = append(feed.live["acme"], mem(cat, text))
		}
	}
	query := learningCases[0].query
	svc := NewService(New(DefaultConfig()), feed, 0)
	acme := engram.NewContextWithTenant(context.Background(), "acme")

	for _, q := range []string{"", "   ", "\n\t"} {
		if _, err := svc.RouteQuery(acme, q); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("RouteQuery(%q) error %v, want EINVALID", q, err)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			rt, err := svc.RouteQuery(acme, query)
			if err != nil {
				t.Error(err)
				return
			}
			if rt.Domains[0].Name != "work" {
				t.Errorf("loaded tenant routes to %v, want work", rt.Domains)
			}
		})
	}
	wg.Wait()
	if feed.loads["acme"] != 1 {
		t.Errorf("tenant loaded %d times, want once", feed.loads["acme"])
	}

	// Changes after the snapshot are applied before the next route: a
	// memory created, then edited, then deleted.
	docs := func() int { return svc.router.tenants["acme"].docs }
	n := docs()
	falcon := mem("work", "Falcon weekend cutover moved")
	feed.write("acme", nil, falcon)
	if _, err := svc.RouteQuery(acme, query); err != nil || docs() != n+1 {
		t.Fatalf("after a create: %d docs, want %d (%v)", docs(), n+1, err)
	}
	edited := mem("emotion", "Falcon weekend cutover moved again, I am so stressed")
	feed.write("acme", falcon, edited)
	if _, err := svc.RouteQuery(acme, query); err != nil || docs() != n+1 || svc.router.tenants["acme"].tokens["emotion"] == 0 {
		t.Fatalf("after an edit: %d docs, emotion tokens %d (%v)", docs(), svc.router.tenants["acme"].tokens["emotion"], err)
	}
	gone := *edited
	gone.Valid = false
	feed.write("acme", edited, &gone)
	if _, err := svc.RouteQuery(acme, query); err != nil || docs() != n || svc.router.tenants["acme"].tokens["emotion"] != 0 {
		t.Fatalf("after a delete: %d docs, want %d (%v)", docs(), n, err)
	}
	// A model kept current by changes equals one loaded afresh.
	fresh := NewService(New(DefaultConfig()), feed, 0)
	if _, err := fresh.RouteQuery(acme, query); err != nil {
		t.Fatal(err)
	}
	a, b := svc.router.tenants["acme"], fresh.router.tenants["acme"]
	if a.docs != b.docs || !maps.Equal(a.tokens, b.tokens) {
		t.Errorf("followed model %d docs %v, fresh model %d docs %v", a.docs, a.tokens, b.docs, b.tokens)
	}

	globex := engram.NewContextWithTenant(context.Background(), "globex")
	feed.err = errors.New("database is down")
	if _, err := svc.RouteQuery(globex, query); err == nil || svc.router.tenants["globex"] != nil {
		t.Errorf("failed load: error %v, model %v", err, svc.router.tenants["globex"])
	}
	feed.err = nil
	rt, err := svc.RouteQuery(globex, query)
	if err != nil || feed.loads["globex"] != 2 {
		t.Fatalf("retried load: %v, %d loads", err, feed.loads["globex"])
	}
	if rt.Domains[0].Name != "life" {
		t.Errorf("globex routes on acme's memories: %v", rt.Domains)
	}

	plain := NewService(New(DefaultConfig()), nil, 0)
	if _, err := plain.RouteQuery(acme, strings.Repeat("会议 ", 50000)); err != nil {
		t.Errorf("service without a feed: %v", err)
	}
}

// TestServiceEvicts: at most maxTenants models stay in memory; an evicted
// tenant is rebuilt from the store, and routes the same.
func TestServiceEvicts(t *testing.T) {
	feed := newFakeFeed()
	for i := range 5 {
		tenant := fmt.Sprint("t", i)
		feed.live[tenant] = []*engram.Memory{mem("work", "Falcon migration cutover"), mem("work", "Falcon sprint review")}
	}
	svc := NewService(New(DefaultConfig()), feed, 2)
	ctx := func(i int) context.Context {
		return engram.NewContextWithTenant(context.Background(), fmt.Sprint("t", i))
	}
	first, err := svc.RouteQuery(ctx(0), "how is Falcon going")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := svc.RouteQuery(ctx(i), "how is Falcon going"); err != nil {
			t.Fatal(err)
		}
	}
	if len(svc.tenants) != 2 || len(svc.router.tenants) != 2 || svc.lru.Len() != 2 {
		t.Errorf("%d states, %d models, %d in the LRU list; want 2 each", len(svc.tenants), len(svc.router.tenants), svc.lru.Len())
	}
	again, err := svc.RouteQuery(ctx(0), "how is Falcon going")
	if err != nil {
		t.Fatal(err)
	}
	if feed.loads["t0"] != 2 || !reflect.DeepEqual(first, again) {
		t.Errorf("evicted tenant: %d loads, route %+v then %+v", feed.loads["t0"], first, again)
	}
}

func TestConcurrentRouteObserve(t *testing.T) {
	r := New(DefaultConfig())
	var wg sync.WaitGroup
	for i := range 8 {
		tenant := fmt.Sprint("t", i%3)
		wg.Go(func() {
			for j := range 200 {
				switch j % 4 {
				case 0:
					r.Observe(tenant, "work", fmt.Sprintf("Falcon task %d shipped", j))
				case 1:
					r.Forget(tenant, "work", fmt.Sprintf("Falcon task %d shipped", j-1))
				case 2:
					if j%40 == 2 {
						r.Drop(tenant)
					}
				default:
					checkRoute(t, r.Route(tenant, "Falcon 周末 status"))
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkRoute(b *testing.B) {
	r := New(DefaultConfig())
	for i := range 200 {
		r.Observe("t", DefaultConfig().Categories[i%5], fmt.Sprintf("memory %d about the release train 第%d次会议", i, i))
	}
	for _, q := range []struct{ name, query string }{
		{"en", "should I push back on the friday release or just ship it"},
		{"zh", "为什么最近总是心情低落，工作压力太大了"},
		{"100KB", strings.Repeat("why did the meeting run late 为什么会议拖堂 ", 2500)},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				r.Route("t", q.query)
			}
		})
	}
}
