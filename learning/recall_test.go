package learning_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// fixedRouter routes every query to the same categories, so that a test
// decides what is on and off the route.
type fixedRouter struct{ categories []string }

func (r fixedRouter) RouteQuery(_ context.Context, query string) (*engram.Route, error) {
	if strings.TrimSpace(query) == "" {
		return nil, engram.Errorf(engram.EINVALID, "query is empty")
	}
	return &engram.Route{Intent: engram.IntentAsk, Mode: engram.ModeFactual,
		Domains: []engram.DomainScore{{Name: r.categories[0], Score: 1}}, Categories: r.categories, Layers: []string{engram.LayerL2}}, nil
}

func newRecaller(t testing.TB, db *store.DB, rt engram.RouterService, cfg engram.RecallConfig) *learning.Recaller {
	t.Helper()
	return learning.NewRecaller(indextest.Wrap(db), rt, learning.NewScorer(learning.DefaultScoreConfig(), time.Now), storetest.Tokenizer(t), cfg, time.Now)
}

// addMemories stores ms for the tenant in ctx and returns them as stored.
func addMemories(t testing.TB, db *store.DB, ctx context.Context, ms ...*engram.Memory) []*engram.Memory {
	t.Helper()
	res, err := db.CreateMemories(ctx, ms)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*engram.Memory, len(res))
	for i, r := range res {
		if r.Deduplicated {
			t.Fatalf("memory %q was deduplicated", r.Memory.Content)
		}
		out[i] = r.Memory
	}
	return out
}

func memory(category, content string, tags ...string) *engram.Memory {
	return &engram.Memory{Category: category, Content: content, Tags: tags}
}

// fillers are memories that share no word with the test queries, so that
// the queries' words are rare enough to be read (a term in more than half
// of a tenant's memories is skipped when the query has a rarer one).
func fillers(category string, n int) []*engram.Memory {
	words := []string{"violin", "harbor", "pepper", "lantern", "glacier", "copper", "meadow", "thunder", "saffron", "pebble"}
	out := make([]*engram.Memory, n)
	for i := range out {
		out[i] = memory(category, fmt.Sprintf("%s %s note %d", words[i%len(words)], words[(i+3)%len(words)], i))
	}
	return out
}

func findItem(items []engram.RecallItem, id string) (engram.RecallItem, int) {
	for i, it := range items {
		if it.ID == id {
			return it, i
		}
	}
	return engram.RecallItem{}, -1
}

func recall(t testing.TB, r *learning.Recaller, ctx context.Context, req engram.RecallRequest) *engram.Recall {
	t.Helper()
	rec, err := r.Recall(ctx, req)
	if err != nil {
		t.Fatalf("Recall(%+v): %v", req, err)
	}
	return rec
}

// TestRecallRoutingIsSoft: with at least MinRouted hits in the routed
// categories, an off-route hit keeps OffRouteWeight of the relevance of
// an on-route hit with the same text; with fewer, the route is ignored.
func TestRecallRoutingIsSoft(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	cfg := engram.DefaultRecallConfig()
	r := newRecaller(t, db, fixedRouter{[]string{engram.CategoryWork}}, cfg)
	const text = "Falcon migration plan for the billing database"

	for _, tc := range []struct {
		name   string
		routed int // work memories matching the query, the twin included
		weight float64
	}{
		{"enough routed hits", cfg.MinRouted, cfg.OffRouteWeight},
		{"more routed hits", cfg.MinRouted + 2, cfg.OffRouteWeight},
		{"too few routed hits", cfg.MinRouted - 1, 1},
		{"one routed hit", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := storetest.Tenant(t, db, "soft-"+strings.ReplaceAll(tc.name, " ", "-"))
			ms := []*engram.Memory{memory(engram.CategoryWork, text), memory(engram.CategoryLife, text)}
			for i := 1; i < tc.routed; i++ {
				ms = append(ms, memory(engram.CategoryWork, fmt.Sprintf("Falcon migration step %d", i)))
			}
			ms = append(ms, fillers(engram.CategoryEmotion, 12)...)
			stored := addMemories(t, db, ctx, ms...)
			on, off := stored[0], stored[1]

			rec := recall(t, r, ctx, engram.RecallRequest{Query: "falcon migration plan", TokenBudget: 2000, Fill: true})
			onItem, i := findItem(rec.Items, on.ID)
			offItem, j := findItem(rec.Items, off.ID)
			if i < 0 || j < 0 {
				t.Fatalf("on-route %d, off-route %d in %+v", i, j, rec.Items)
			}
			if onItem.Breakdown.Relevance != 1 {
				t.Errorf("on-route twin relevance %v, want 1 (the best hit)", onItem.Breakdown.Relevance)
			}
			if got, want := offItem.Breakdown.Relevance, tc.weight*onItem.Breakdown.Relevance; math.Abs(got-want) > 1e-12 {
				t.Errorf("off-route twin relevance %v, want %v × %v", got, tc.weight, onItem.Breakdown.Relevance)
			}
			if routed := countIn(rec.Items, engram.CategoryWork); routed != tc.routed {
				t.Errorf("%d work items recalled, want %d", routed, tc.routed)
			}
		})
	}

	// OffRouteWeight 0 drops off-route hits (RecallConfig's doc comment).
	t.Run("weight 0 drops", func(t *testing.T) {
		ctx := storetest.Tenant(t, db, "soft-zero")
		ms := []*engram.Memory{memory(engram.CategoryWork, text), memory(engram.CategoryLife, text)}
		for i := 1; i < cfg.MinRouted; i++ {
			ms = append(ms, memory(engram.CategoryWork, fmt.Sprintf("Falcon migration step %d", i)))
		}
		ms = append(ms, fillers(engram.CategoryEmotion, 12)...)
		stored := addMemories(t, db, ctx, ms...)
		zero := cfg
		zero.OffRouteWeight = 0
		rec := recall(t, newRecaller(t, db, fixedRouter{[]string{engram.CategoryWork}}, zero), ctx,
			engram.RecallRequest{Query: "falcon migration plan", TokenBudget: 2000})
		// Regression: Recaller.candidates once kept off-route hits at score
		// 0 and packed them, although RecallConfig.OffRouteWeight and
		// configs/engram.yaml (off_route_weight) say 0 drops them.
		if it, i := findItem(rec.Items, stored[1].ID); i >= 0 {
			t.Errorf("off-route hit recalled with OffRouteWeight 0: %+v", it)
		}
		if _, i := findItem(rec.Items, stored[0].ID); i < 0 {
			t.Errorf("on-route hit missing")
		}
	})
}

func countIn(items []engram.RecallItem, category string) int {
	n := 0
	for _, it := range items {
		if it.Category == category {
			n++
		}
	}
	return n
}

// TestRecallTagLift: of two memories with the same text, the one carrying
// the request's tags ranks first; relevance × (0.8 + 0.2 × share of the
// request's tags found).
func TestRecallTagLift(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "tags")
	all := []string{engram.CategoryWork, engram.CategoryLife, engram.CategoryEmotion}
	r := newRecaller(t, db, fixedRouter{all}, engram.DefaultRecallConfig())
	const text = "Orchid greenhouse humidity settings for the winter"
	// One tag each, of one term, so both have the same BM25 score.
	stored := addMemories(t, db, ctx, append([]*engram.Memory{
		memory(engram.CategoryWork, text, "projx"),
		memory(engram.CategoryLife, text, "projy"),
	}, fillers(engram.CategoryEmotion, 10)...)...)
	x, y := stored[0], stored[1]

	for _, tc := range []struct {
		tags   []string
		lx, ly float64 // lift of x and y
	}{
		{nil, 1, 1},
		{[]string{"projx"}, 1, 0.8},
		{[]string{"projy"}, 0.8, 1},
		{[]string{"projx", "nope"}, 0.9, 0.8},
		{[]string{"projx", "projy"}, 0.9, 0.9},
		{[]string{"nope"}, 0.8, 0.8},
	} {
		t.Run(strings.Join(tc.tags, ","), func(t *testing.T) {
			rec := recall(t, r, ctx, engram.RecallRequest{Query: "orchid humidity", TokenBudget: 2000, Tags: tc.tags})
			xi, i := findItem(rec.Items, x.ID)
			yi, j := findItem(rec.Items, y.ID)
			if i < 0 || j < 0 {
				t.Fatalf("x at %d, y at %d in %+v", i, j, rec.Items)
			}
			// Relevance is the lifted BM25 score over the best raw score,
			// which is x's and y's alike.
			if math.Abs(xi.Breakdown.Relevance-tc.lx) > 1e-12 || math.Abs(yi.Breakdown.Relevance-tc.ly) > 1e-12 {
				t.Errorf("relevance x %v, y %v; want %v, %v", xi.Breakdown.Relevance, yi.Breakdown.Relevance, tc.lx, tc.ly)
			}
			switch {
			case tc.lx > tc.ly && i > j, tc.ly > tc.lx && j > i:
				t.Errorf("x (lift %v) at %d, y (lift %v) at %d", tc.lx, i, tc.ly, j)
			}
		})
	}
}

// TestRecallNeedsRevisionDemoted: a needs_revision memory scores lower
// than its twin but is still recalled.
func TestRecallNeedsRevisionDemoted(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "revision")
	r := newRecaller(t, db, fixedRouter{[]string{engram.CategoryWork, engram.CategoryLife}}, engram.DefaultRecallConfig())
	const text = "The staging cluster restarts every Sunday at 03:00"
	stored := addMemories(t, db, ctx, append([]*engram.Memory{
		memory(engram.CategoryWork, text), memory(engram.CategoryLife, text),
	}, fillers(engram.CategoryEmotion, 10)...)...)
	flag := true
	bad, err := db.UpdateMemory(ctx, stored[1].ID, engram.MemoryUpdate{NeedsRevision: &flag})
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{2000, 60} {
		rec := recall(t, r, ctx, engram.RecallRequest{Query: "staging cluster restart", TokenBudget: budget})
		good, i := findItem(rec.Items, stored[0].ID)
		demoted, j := findItem(rec.Items, bad.ID)
		if i < 0 || j < 0 {
			t.Fatalf("budget %d: good at %d, needs_revision at %d: %+v", budget, i, j, rec.Items)
		}
		if want := learning.DefaultScoreConfig().RevisionFactor; demoted.Breakdown.Revision != want || good.Breakdown.Revision != 1 {
			t.Errorf("revision factors %v (needs_revision) and %v, want %v and 1", demoted.Breakdown.Revision, good.Breakdown.Revision, want)
		}
		if !(demoted.Score < good.Score) || j < i || demoted.Version != bad.Version {
			t.Errorf("needs_revision memory at %d with score %v, version %d; its twin at %d with %v",
				j, demoted.Score, demoted.Version, i, good.Score)
		}
	}
}

// TestRecallInvalidRequests: an empty query or a budget outside
// [1, MaxBudget] is EINVALID and records nothing.
func TestRecallInvalidRequests(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "invalid")
	p0 := addMemories(t, db, ctx, &engram.Memory{Category: engram.CategoryLife, Content: "The user is Ada", Priority: engram.P0})[0]
	cfg := engram.DefaultRecallConfig()
	r := newRecaller(t, db, fixedRouter{[]string{engram.CategoryLife}}, cfg)
	for _, req := range []engram.RecallRequest{
		{Query: "", TokenBudget: 100},
		{Query: " \n\t", TokenBudget: 100},
		{Query: "Ada", TokenBudget: 0},
		{Query: "Ada", TokenBudget: -1},
		{Query: "Ada", TokenBudget: cfg.MaxBudget + 1},
		{Query: "Ada", TokenBudget: math.MinInt},
	} {
		if rec, err := r.Recall(ctx, req); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("Recall(%+v) = %+v, %v; want EINVALID", req, rec, err)
		}
	}
	if m, err := db.FindMemoryByID(ctx, p0.ID); err != nil || m.AccessCount != 0 {
		t.Errorf("P0 after refused recalls: %+v, %v", m, err)
	}
	rec := recall(t, r, ctx, engram.RecallRequest{Query: "Ada", TokenBudget: cfg.MaxBudget})
	if _, i := findItem(rec.Items, p0.ID); i < 0 {
		t.Errorf("P0 missing at the largest budget")
	}
}

// Vocabulary of the property test: English and Chinese words, a few
// shared by most memories so that common terms are exercised too.
var (
	propEN = strings.Fields("coffee tea deploy server garden tomato budget report friday meeting python golang " +
		"database migration rollback travel flight hotel doctor dentist running marathon piano guitar " +
		"the user likes prefers hates always never before after morning night weekly")
	propZH = []string{"咖啡", "喝茶", "部署", "服务器", "花园", "番茄", "预算", "周报", "会议", "数据库", "迁移", "回滚",
		"旅行", "航班", "酒店", "牙科", "跑步", "钢琴", "用户", "喜欢", "讨厌", "总是", "早上", "晚上", "每周"}
	propPunct = []string{"", "", "", ", ", "。", "！", "?", "…", " — ", "\n", "\t", "  ", "🙂"}
)

func propText(rng *rand.Rand, words int) string {
	var b strings.Builder
	for i := 0; i < words; i++ {
		if rng.IntN(2) == 0 {
			b.WriteString(propEN[rng.IntN(len(propEN))])
			b.WriteByte(' ')
		} else {
			b.WriteString(propZH[rng.IntN(len(propZH))])
		}
		b.WriteString(propPunct[rng.IntN(len(propPunct))])
	}
	return b.String()
}

// visibility is what a tenant's memory looks like to a recall.
type visibility struct {
	live  bool   // valid, not archived, not expired
	agent string // "" shared
}

// TestRecallProperties: for random bilingual tenants, queries, agents,
// tags and budgets, Recall never fails for a budget in [1, MaxBudget],
// the context re-counts within the budget, and every item is a distinct
// memory of the tenant that the agent may see and that is live.
func TestRecallProperties(t *testing.T) {
	const rounds, recallsPerRound = 4, 75
	db := storetest.Open(t, "sqlite")
	tok := storetest.Tokenizer(t)
	rt := router.NewService(router.New(router.DefaultConfig()), db, 0)
	r := newRecaller(t, db, rt, engram.DefaultRecallConfig())
	rng := rand.New(rand.NewPCG(20260301, 7))
	categories := []string{engram.CategoryWork, engram.CategoryLife, engram.CategoryPreference, engram.CategoryEmotion, engram.CategoryStrategy}
	agents := []string{"", "", "", "a1", "a2"}
	tags := []string{"coffee", "work", "家庭", "urgent", "health"}
	past, future := time.Now().Add(-48*time.Hour), time.Now().Add(24*365*time.Hour)
	cases := 0

	for round := 0; round < rounds; round++ {
		ctx := storetest.Tenant(t, db, fmt.Sprintf("prop-%d", round))
		other := storetest.Tenant(t, db, fmt.Sprintf("prop-%d-other", round))
		// A neighbour tenant in the same words, which must never leak in.
		var neighbour []*engram.Memory
		for i := 0; i < 30; i++ {
			neighbour = append(neighbour, &engram.Memory{Category: categories[rng.IntN(len(categories))], Content: propText(rng, 3+rng.IntN(8)),
				Priority: []engram.Priority{engram.P0, engram.P2}[rng.IntN(2)]})
		}
		addMemories(t, db, other, neighbour...)

		n := 30 + rng.IntN(50)
		ms := make([]*engram.Memory, 0, n)
		seen := map[string]bool{}
		for len(ms) < n {
			m := &engram.Memory{
				Category: categories[rng.IntN(len(categories))],
				Content:  propText(rng, 1+rng.IntN(12)),
				Priority: []engram.Priority{engram.P0, engram.P1, engram.P2, engram.P2, engram.P3}[rng.IntN(5)],
				AgentID:  agents[rng.IntN(len(agents))],
			}
			if rng.IntN(6) == 0 {
				m.Content = strings.Repeat(propText(rng, 20), 1+rng.IntN(30)) // long: the summary may stand in
				m.Summary = propText(rng, 1+rng.IntN(4))
			}
			if strings.TrimSpace(m.Content) == "" || seen[m.Category+"\x00"+strings.Join(strings.Fields(m.Content), " ")] {
				continue
			}
			seen[m.Category+"\x00"+strings.Join(strings.Fields(m.Content), " ")] = true
			for _, tg := range tags {
				if rng.IntN(4) == 0 {
					m.Tags = append(m.Tags, tg)
				}
			}
			switch rng.IntN(8) {
			case 0:
				m.ExpiresAt = &past
			case 1:
				m.ExpiresAt = &future
			}
			ms = append(ms, m)
		}
		stored := addMemories(t, db, ctx, ms...)
		vis := map[string]visibility{}
		for _, m := range stored {
			v := visibility{live: m.ExpiresAt == nil || m.ExpiresAt.After(time.Now()), agent: m.AgentID}
			switch rng.IntN(10) {
			case 0:
				if _, err := db.DeleteMemory(ctx, m.ID, nil); err != nil {
					t.Fatal(err)
				}
				v.live = false
			case 1:
				archived := true
				if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Archived: &archived}); err != nil {
					t.Fatal(err)
				}
				v.live = false
			case 2, 3:
				flag := true
				if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{NeedsRevision: &flag}); err != nil {
					t.Fatal(err)
				}
			}
			vis[m.ID] = v
		}

		for i := 0; i < recallsPerRound; i++ {
			req := engram.RecallRequest{Query: propText(rng, 1+rng.IntN(6)), TokenBudget: rng.IntN(3001), AgentID: agents[rng.IntN(len(agents))]}
			switch rng.IntN(5) {
			case 0: // tight budgets, where the header and the last line decide
				req.TokenBudget = rng.IntN(40)
			case 1:
				req.TokenBudget = 0
			}
			if rng.IntN(10) == 0 {
				req.Query = []string{"?!…", "🙂🙃", "'; DROP TABLE memories; --", `"a" AND b* NEAR(x)`}[rng.IntN(4)]
			}
			if rng.IntN(3) == 0 {
				req.Tags = []string{tags[rng.IntN(len(tags))]}
			}
			rec, err := r.Recall(ctx, req)
			if req.TokenBudget == 0 || strings.TrimSpace(req.Query) == "" {
				if engram.ErrorCode(err) != engram.EINVALID {
					t.Errorf("Recall(%+v): %v, want EINVALID", req, err)
				}
				continue
			}
			cases++
			if err != nil {
				t.Errorf("Recall(%q, budget %d): %v", req.Query, req.TokenBudget, err)
				continue
			}
			if n := tok.Count(rec.Context); n > req.TokenBudget || n != rec.TokensUsed {
				t.Errorf("Recall(%q, budget %d): context counts %d tokens, tokens_used %d", req.Query, req.TokenBudget, n, rec.TokensUsed)
			}
			if (len(rec.Items) == 0) != (rec.Context == "") || !strings.HasPrefix(rec.ID, "rec_") {
				t.Errorf("Recall(%q, budget %d): id %q, %d items, context %q", req.Query, req.TokenBudget, rec.ID, len(rec.Items), rec.Context)
			}
			ids := map[string]bool{}
			for _, it := range rec.Items {
				v, ok := vis[it.ID]
				switch {
				case !ok:
					t.Errorf("Recall(%q): item %s is not the tenant's", req.Query, it.ID)
				case !v.live:
					t.Errorf("Recall(%q): item %s is tombstoned, archived or expired", req.Query, it.ID)
				case v.agent != "" && v.agent != req.AgentID:
					t.Errorf("Recall(%q) for agent %q: item %s is private to %q", req.Query, req.AgentID, it.ID, v.agent)
				case ids[it.ID]:
					t.Errorf("Recall(%q): item %s twice", req.Query, it.ID)
				}
				ids[it.ID] = true
				if !strings.Contains(rec.Context, learning.RecallLine(nil, it.Text)) {
					t.Errorf("Recall(%q): item %s's line is not in the context", req.Query, it.ID)
				}
				if b := it.Breakdown; math.Abs(min(b.Relevance*b.Reward*b.Confidence*b.Retention*b.Revision*b.Emotion, 1)-b.Score) > 1e-9 {
					t.Errorf("Recall(%q): item %s breakdown %+v", req.Query, it.ID, b)
				}
			}
		}
	}
	if cases < 200 {
		t.Fatalf("only %d recalls with a budget of at least 1", cases)
	}
}

// The fixed router must satisfy the interface the Recaller takes.
var _ engram.RouterService = fixedRouter{}
