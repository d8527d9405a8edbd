package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// newRecallEnv is newEnv with the router and the recall pipeline wired
// the way cmd/engram's NewServices does: the router follows the store's
// change feed.
func newRecallEnv(t testing.TB, engine string) *env {
	t.Helper()
	return newRecallEnvOn(t, storetest.Open(t, engine))
}

// flushRecalls commits the recall records and access counts the
// server's recall writer still holds.
func flushRecalls(t testing.TB, e *env) {
	t.Helper()
	if err := e.db.FlushRecalls(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// newRecallEnvOn is newRecallEnv on an open store, so that two servers can
// share one database.
func newRecallEnvOn(t testing.TB, db *store.DB) *env {
	t.Helper()
	cfg := configs.Default()
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	routes := router.NewService(router.New(rcfg), db, 0)
	scoring := learning.NewScoreConfig(cfg.Scoring)
	if err := scoring.Validate(); err != nil {
		t.Fatal(err)
	}
	lexical := indextest.Wrap(db)
	rec := learning.NewRecaller(lexical, routes, learning.NewScorer(scoring, time.Now), storetest.Tokenizer(t),
		cfg.Recall, time.Now)
	lim := cfg.Limits
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Router: routes, Recall: rec,
		Limits: server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, lexical: lexical, h: s}
}

// maxRecallBudget is recall.max_budget of the default configuration.
var maxRecallBudget = configs.Default().Recall.MaxBudget

// postRecall sends POST /v1/recall and decodes a 200 answer.
func postRecall(t testing.TB, e *env, key string, req map[string]any) engram.Recall {
	t.Helper()
	r := e.do(t, "POST", "/v1/recall", key, mustJSON(req))
	wantStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `"items":[`) {
		t.Errorf("recall items are not a JSON array: %s", r)
	}
	var rec engram.Recall
	if err := json.Unmarshal(r.Body, &rec); err != nil {
		t.Fatalf("recall answer: %v: %s", err, r)
	}
	return rec
}

// getMemory reads one memory through the API.
func getMemory(t testing.TB, e *env, key, id string) engram.Memory {
	t.Helper()
	r := e.do(t, "GET", "/v1/memories/"+id, key, "")
	wantStatus(t, r, http.StatusOK)
	var m engram.Memory
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// listMemories lists every memory of the tenant, tombstoned and archived
// ones included.
func listMemories(t testing.TB, e *env, key string) []engram.Memory {
	t.Helper()
	r := e.do(t, "GET", "/v1/memories?include_deleted=true&include_archived=true&limit=500", key, "")
	wantStatus(t, r, http.StatusOK)
	var p struct {
		Items      []engram.Memory `json:"items"`
		NextCursor string          `json:"next_cursor"`
	}
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatal(err)
	}
	if p.NextCursor != "" {
		t.Fatal("listMemories: more than one page")
	}
	return p.Items
}

func itemIDs(items []engram.RecallItem) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

// checkRecallShape checks what holds for every recall answer: the
// context is the header and one "- text" line per item in item order,
// re-counts to tokens_used within the budget, items are unique, packed
// by injection group then score, and every breakdown factor is in [0, 1]
// with the score their product.
func checkRecallShape(t testing.TB, rec engram.Recall, budget int) {
	t.Helper()
	tok := storetest.Tokenizer(t)
	if rec.TokenBudget != budget {
		t.Errorf("token_budget = %d, want %d", rec.TokenBudget, budget)
	}
	if n := tok.Count(rec.Context); n != rec.TokensUsed || n > budget {
		t.Errorf("context re-counts to %d tokens; tokens_used %d, budget %d", n, rec.TokensUsed, budget)
	}
	if !strings.HasPrefix(rec.ID, "rec_") {
		t.Errorf("recall_id %q does not start with rec_", rec.ID)
	}
	if len(rec.Items) == 0 {
		if rec.Context != "" || rec.TokensUsed != 0 {
			t.Errorf("no items but context %q (%d tokens)", rec.Context, rec.TokensUsed)
		}
		return
	}
	want := learning.Header
	seen := map[string]bool{}
	prevGroup, prevScore := -1, math.Inf(1)
	for i, it := range rec.Items {
		line := learning.RecallLine(nil, it.Text)
		want += "\n" + line
		if n := tok.Count(line); it.Tokens != n {
			t.Errorf("item %d (%s) tokens = %d, its line counts %d", i, it.ID, it.Tokens, n)
		}
		if seen[it.ID] {
			t.Errorf("item %s appears twice", it.ID)
		}
		seen[it.ID] = true
		b := it.Breakdown
		for name, v := range map[string]float64{"relevance": b.Relevance, "reward": b.Reward, "confidence": b.Confidence,
			"retention": b.Retention, "revision": b.Revision, "score": b.Score} {
			if !(v >= 0 && v <= 1) {
				t.Errorf("item %s breakdown %s = %v, want in [0, 1]", it.ID, name, v)
			}
		}
		if p := min(b.Relevance*b.Reward*b.Confidence*b.Retention*b.Revision*b.Emotion, 1); math.Abs(p-b.Score) > 1e-9 || it.Score != b.Score {
			t.Errorf("item %s score %v, breakdown score %v, product of factors %v", it.ID, it.Score, b.Score, p)
		}
		g := learning.InjectionGroup(&engram.Memory{Category: it.Category}, b)
		switch {
		case g < prevGroup:
			t.Errorf("item %d (%s, %s) of group %d comes after group %d", i, it.ID, it.Category, g, prevGroup)
		case g == prevGroup && it.Score > prevScore:
			t.Errorf("item %d (%s) score %v above the previous item's %v in the same group", i, it.ID, it.Score, prevScore)
		}
		prevGroup, prevScore = g, it.Score
	}
	if rec.Context != want {
		t.Errorf("context is not the header and the items' lines:\ngot  %q\nwant %q", rec.Context, want)
	}
}

// recallFixture is a bilingual tenant with memories of every state.
type recallFixture struct {
	e   *env
	key string
	// Live, shared memories.
	live                                 []apiMemory
	prefZH, prefEN, strategy, p0, revise apiMemory
	// Never recalled.
	expired, tombstoned, archived apiMemory
	// Private to agent a1.
	private, privateP0 apiMemory
}

func newRecallFixture(t *testing.T, engine string) *recallFixture {
	t.Helper()
	e := newRecallEnv(t, engine)
	f := &recallFixture{e: e}
	f.key, _ = e.tenant(t, "alpha")
	add := func(body string) apiMemory {
		t.Helper()
		m := create(t, e, f.key, body)
		f.live = append(f.live, m)
		return m
	}
	f.prefZH = add(`{"content":"我喜欢喝燕麦拿铁咖啡，不加糖","category":"preference"}`)
	f.prefEN = add(`{"content":"The user likes a flat white coffee with oat milk","category":"preference","tags":["coffee"]}`)
	f.strategy = add(`{"content":"When the user wants coffee, suggest the café near the office first","category":"strategy"}`)
	f.p0 = add(`{"content":"The user's name is Ada; 用户叫 Ada","category":"life","priority":"P0"}`)
	f.revise = add(`{"content":"The user drinks espresso coffee late at night","category":"preference"}`)
	add(`{"content":"周末常去山里徒步","category":"life"}`)
	add(`{"content":"The user walks the dog every morning before coffee","category":"life"}`)
	add(`{"content":"The deploy pipeline runs on Fridays","category":"work"}`)
	add(`{"content":"项目周报每周一提交","category":"work"}`)
	add(`{"content":"Coffee budget for the team offsite is approved","category":"work"}`)
	add(`{"content":"季度目标需要在月底前完成","category":"work"}`)
	add(`{"content":"The user feels stressed before deadlines","category":"emotion"}`)
	add(`{"content":"听到好消息时很开心","category":"emotion"}`)

	r := e.do(t, "PATCH", "/v1/memories/"+f.revise.ID, f.key, `{"needs_revision":true}`)
	wantStatus(t, r, http.StatusOK)
	f.revise = r.memory(t)

	// The never-recalled ones are P0 and speak of coffee, so that both the
	// pinned and the lexical path would pick them.
	f.expired = create(t, e, f.key, `{"content":"Coffee coupon 咖啡买一送一 this week","category":"life","priority":"P0","expires_at":"2001-01-01T00:00:00Z"}`)
	f.tombstoned = create(t, e, f.key, `{"content":"The user hates decaf coffee 讨厌低因咖啡","category":"preference","priority":"P0"}`)
	wantStatus(t, e.do(t, "DELETE", "/v1/memories/"+f.tombstoned.ID, f.key, ""), http.StatusOK)
	f.archived = create(t, e, f.key, `{"content":"Old coffee machine manual 旧咖啡机说明书","category":"preference","priority":"P0"}`)
	wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+f.archived.ID, f.key, `{"archived":true}`), http.StatusOK)

	f.private = create(t, e, f.key, `{"content":"Agent a1 notes the user orders cold brew coffee 冷萃咖啡","category":"preference","agent_id":"a1"}`)
	f.privateP0 = create(t, e, f.key, `{"content":"a1 identity fact: 代号 nightingale","category":"life","priority":"P0","agent_id":"a1"}`)
	return f
}

// TestRecallBilingual: a Chinese and an English coffee query asking for
// the identity block recall the matching preferences, the P0 identity
// memory first, as context, and the needs_revision memory (demoted,
// injected or left out), never an expired, tombstoned or archived one, and an
// agent's private memories only for that agent; the answer is exactly
// packed.
func TestRecallBilingual(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newRecallFixture(t, engine)
		const budget = 2000
		for _, tc := range []struct {
			query string
			want  apiMemory // the preference the query is about
		}{
			{"我想喝咖啡", f.prefZH},
			{"what coffee do I like?", f.prefEN},
		} {
			for _, agent := range []string{"", "a1"} {
				t.Run(tc.query+"/agent="+agent, func(t *testing.T) {
					req := map[string]any{"query": tc.query, "token_budget": budget, "identity": true}
					if agent != "" {
						req["agent_id"] = agent
					}
					rec := postRecall(t, f.e, f.key, req)
					checkRecallShape(t, rec, budget)
					if rec.Query != tc.query || len(rec.DegradeReasons) != 0 {
						t.Errorf("query %q, degrade_reasons %v", rec.Query, rec.DegradeReasons)
					}
					rt := rec.Route
					if !slices.Contains([]engram.Intent{engram.IntentAsk, engram.IntentDecide, engram.IntentReflect}, rt.Intent) ||
						!slices.Contains([]engram.Mode{engram.ModeFactual, engram.ModeExploratory, engram.ModeTemporal, engram.ModeCausal}, rt.Mode) ||
						len(rt.Domains) == 0 || len(rt.Categories) == 0 || !slices.Contains(rt.Layers, engram.LayerL2) {
						t.Errorf("route %+v", rt)
					}
					for _, d := range rt.Domains {
						if !(d.Score >= 0 && d.Score <= 1) || d.Name == "" {
							t.Errorf("route domain %+v", d)
						}
					}
					if !strings.HasPrefix(rec.Context, "[Agent Memory]\n") {
						t.Errorf("context does not start with the header: %q", rec.Context)
					}
					ids := itemIDs(rec.Items)
					for _, m := range []apiMemory{tc.want, f.p0} {
						if !slices.Contains(ids, m.ID) {
							t.Errorf("%q (%s) not recalled; items %v\n%s", m.Content, m.ID, ids, rec.Context)
						}
					}
					if it := rec.Items[0]; it.ID != f.p0.ID && it.ID != f.privateP0.ID || !it.Breakdown.Pinned {
						t.Errorf("the pinned identity memory is not first, as context: %+v", it)
					}
					// What was found but not injected is listed with why.
					ids = append(ids, itemIDs(rec.LeftOut)...)
					for _, m := range []apiMemory{f.expired, f.tombstoned, f.archived} {
						if slices.Contains(ids, m.ID) || strings.Contains(rec.Context, m.Content) {
							t.Errorf("recalled %q (%s), which is expired, tombstoned or archived", m.Content, m.ID)
						}
					}
					for _, m := range []apiMemory{f.private, f.privateP0} {
						if got := slices.Contains(ids, m.ID); got != (agent == "a1") {
							t.Errorf("agent %q: a1's private %q recalled = %v", agent, m.Content, got)
						}
						if agent == "" && strings.Contains(rec.Context, m.Content) {
							t.Errorf("a1's private memory in a shared context")
						}
					}
					for _, it := range rec.Items {
						if it.ID == f.revise.ID {
							if it.Breakdown.Revision >= 1 || it.Version != f.revise.Version {
								t.Errorf("needs_revision memory not demoted: %+v", it)
							}
						} else if it.Breakdown.Revision != 1 {
							t.Errorf("item %s demoted (revision %v) without needs_revision", it.ID, it.Breakdown.Revision)
						}
					}
					// The English query names coffee: the needs_revision
					// memory matches it and is demoted (left out or
					// injected), not hidden.
					if strings.Contains(tc.query, "coffee") && !slices.Contains(ids, f.revise.ID) {
						t.Errorf("needs_revision memory %q hidden; items %v", f.revise.Content, ids)
					}
				})
			}
		}
	})
}

// TestRecallFillAndIdentity: without fill a recall injects what passes
// the relevance cut and lists the rest in left_out; "fill": true packs
// every candidate that fits; "identity": true puts the pinned identity
// memory first, marked pinned, as a route that asks for it does.
func TestRecallFillAndIdentity(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newRecallFixture(t, engine)
		const q = "what coffee do I like?"
		plain := postRecall(t, f.e, f.key, map[string]any{"query": q, "token_budget": 2000})
		checkRecallShape(t, plain, 2000)
		fill := postRecall(t, f.e, f.key, map[string]any{"query": q, "token_budget": 2000, "fill": true})
		checkRecallShape(t, fill, 2000)
		identity := postRecall(t, f.e, f.key, map[string]any{"query": q, "token_budget": 2000, "identity": true, "fill": false})
		checkRecallShape(t, identity, 2000)
		// The query is in the first person, so the route asks for the
		// identity block: it goes first, pinned; a route that does not ask
		// leaves it out.
		hasP0 := slices.Contains(itemIDs(plain.Items), f.p0.ID)
		if !slices.Contains(itemIDs(plain.Items), f.prefEN.ID) || hasP0 != plain.Route.Identity ||
			hasP0 && (plain.Items[0].ID != f.p0.ID || !plain.Items[0].Breakdown.Pinned) {
			t.Errorf("plain recall: %v (route identity %v); want the coffee preference, the identity memory first and pinned only when the route asks",
				itemIDs(plain.Items), plain.Route.Identity)
		}
		if len(plain.LeftOut) == 0 || plain.LeftOut[0].Breakdown.Cut == "" {
			t.Errorf("plain recall left nothing out, or without a reason: %+v", plain.LeftOut)
		}
		if len(fill.Items) <= len(plain.Items) || !slices.Contains(itemIDs(fill.Items), f.p0.ID) {
			t.Errorf("fill: %v, plain %v", itemIDs(fill.Items), itemIDs(plain.Items))
		}
		want := len(plain.Items)
		if !hasP0 {
			want++
		}
		if it := identity.Items[0]; it.ID != f.p0.ID || !it.Breakdown.Pinned || len(identity.Items) != want {
			t.Errorf("identity: %v, want the identity memory first, pinned, then the plain recall's items", itemIDs(identity.Items))
		}
	})
}

// TestRecallBudgetExact: whatever the budget, the re-counted context
// never exceeds it, and a budget too small for anything is an empty
// answer, not an error.
func TestRecallBudgetExact(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newRecallFixture(t, engine)
		for _, q := range []string{"我想喝咖啡", "what coffee do I like?", "deploy pipeline 周报"} {
			for _, budget := range []int{1, 5, 20, 50, 100, 500, 2000} {
				rec := postRecall(t, f.e, f.key, map[string]any{"query": q, "token_budget": budget})
				checkRecallShape(t, rec, budget)
				if budget == 1 && (rec.Context != "" || len(rec.Items) != 0 || rec.TokensUsed != 0) {
					t.Errorf("budget 1: context %q, %d items, %d tokens; want empty", rec.Context, len(rec.Items), rec.TokensUsed)
				}
				if budget >= 100 && len(rec.Items) == 0 {
					t.Errorf("%q with budget %d recalled nothing", q, budget)
				}
			}
		}
	})
}

// TestRecallSummaryStandsIn: a memory whose content does not fit the
// budget is injected as its summary when that fits.
func TestRecallSummaryStandsIn(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRecallEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		long := strings.Repeat("The zebrafish tank needs its filter rinsed and 20% of the water changed every week. ", 25)
		m := create(t, e, key, mustJSON(map[string]any{"content": long, "summary": "zebrafish tank: rinse filter, change 20% water weekly",
			"category": "preference"}))
		create(t, e, key, `{"content":"The user's name is Ada","category":"life","priority":"P0"}`)
		tok := storetest.Tokenizer(t)
		// The whole context with the content counts full tokens; Pack
		// counts the header, the line break and the line apart, which may
		// be a token more (BPE merges "]\n"): between the two, either the
		// content or the summary is right.
		full := tok.Count(learning.Header + "\n" + learning.RecallLine(nil, long))
		parts := tok.Count(learning.Header) + tok.Count("\n") + tok.Count(learning.RecallLine(nil, long))
		for _, budget := range []int{30, 60, full - 1, full, parts, parts + 40} {
			rec := postRecall(t, e, key, map[string]any{"query": "zebrafish filter", "token_budget": budget})
			checkRecallShape(t, rec, budget)
			if len(rec.Items) == 0 || rec.Items[0].ID != m.ID {
				t.Fatalf("budget %d: items %v, want the zebrafish preference first", budget, itemIDs(rec.Items))
			}
			it := rec.Items[0]
			wantSummary := budget < full
			if budget >= full && budget < parts {
				wantSummary = it.UsedSummary
			}
			if it.UsedSummary != wantSummary || (wantSummary && it.Text != "zebrafish tank: rinse filter, change 20% water weekly") ||
				(!wantSummary && it.Text != long) {
				t.Errorf("budget %d (content needs %d): used_summary %v, text %.60q", budget, full, it.UsedSummary, it.Text)
			}
		}
	})
}

// TestRecallBadInput: every malformed recall is a 400 naming the problem
// and is not recorded (no memory's access count moves); odd but valid
// queries are answered, never with a 5xx.
func TestRecallBadInput(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newRecallFixture(t, engine)
		e := f.e
		max := fmt.Sprint(maxRecallBudget)
		for _, tc := range []struct {
			name, body string
			parts      []string
		}{
			{"empty query", `{"query":"","token_budget":100}`, []string{"query", "empty"}},
			{"blank query", `{"query":" \t\n　","token_budget":100}`, []string{"query", "empty"}},
			{"no query", `{"token_budget":100}`, []string{"query"}},
			{"budget 0", `{"query":"coffee","token_budget":0}`, []string{"token_budget", max}},
			{"budget -5", `{"query":"coffee","token_budget":-5}`, []string{"token_budget", max}},
			{"budget above max", fmt.Sprintf(`{"query":"coffee","token_budget":%d}`, maxRecallBudget+1), []string{"token_budget", max}},
			{"huge budget", `{"query":"coffee","token_budget":1e30}`, []string{"token_budget"}},
			{"missing budget", `{"query":"coffee"}`, []string{"token_budget"}},
			{"string budget", `{"query":"coffee","token_budget":"10"}`, []string{"token_budget", "number"}},
			{"fractional budget", `{"query":"coffee","token_budget":10.5}`, []string{"token_budget", "number"}},
			{"unknown field", `{"query":"coffee","token_budget":100,"budget":5}`, []string{"unknown field", "budget"}},
			{"tags not a list", `{"query":"coffee","token_budget":100,"tags":"coffee"}`, []string{"tags"}},
			{"query not a string", `{"query":42,"token_budget":100}`, []string{"query"}},
			{"fill not a boolean", `{"query":"coffee","token_budget":100,"fill":"yes"}`, []string{"fill"}},
			{"identity not a boolean", `{"query":"coffee","token_budget":100,"identity":1}`, []string{"identity"}},
			{"trailing data", `{"query":"coffee","token_budget":100}{}`, []string{"after"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, e.do(t, "POST", "/v1/recall", f.key, tc.body), http.StatusBadRequest, engram.EINVALID, tc.parts...)
			})
		}
		flushRecalls(t, e)
		for _, m := range listMemories(t, e, f.key) {
			if m.AccessCount != 0 || m.LastAccessedAt != nil {
				t.Errorf("memory %s accessed (%d, %v) by a refused recall", m.ID, m.AccessCount, m.LastAccessedAt)
			}
		}

		t.Run("long query is cut", func(t *testing.T) {
			maxChars := configs.Default().Recall.MaxQueryChars
			for _, q := range []string{strings.Repeat("coffee ", 15000), strings.Repeat("咖啡", 17000)} {
				if len(q) < 100_000 {
					t.Fatalf("query of %d bytes", len(q))
				}
				rec := postRecall(t, e, f.key, map[string]any{"query": q, "token_budget": 500, "identity": true})
				checkRecallShape(t, rec, 500)
				if !slices.Contains(rec.DegradeReasons, "query_truncated") {
					t.Errorf("degrade_reasons %v, want query_truncated", rec.DegradeReasons)
				}
				if n := utf8.RuneCountInString(rec.Query); n != maxChars {
					t.Errorf("recorded query has %d characters, want %d", n, maxChars)
				}
				if !slices.Contains(itemIDs(rec.Items), f.p0.ID) {
					t.Errorf("P0 memory missing from a truncated recall")
				}
			}
		})

		liveIDs := map[string]bool{}
		for _, m := range f.live {
			liveIDs[m.ID] = true
		}
		before := len(listMemories(t, e, f.key))
		for _, tc := range []struct {
			name string
			req  map[string]any
		}{
			{"punctuation only", map[string]any{"query": "?!…", "token_budget": 300}},
			{"emoji only", map[string]any{"query": "🙂🙃", "token_budget": 300}},
			{"unknown tag", map[string]any{"query": "coffee", "token_budget": 300, "tags": []string{"no-such-tag"}}},
			{"SQL", map[string]any{"query": "'; DROP TABLE memories; --", "token_budget": 300}},
			{"FTS syntax", map[string]any{"query": `"a" AND b* -c NEAR(x) coffee:* | !咖啡 & ^`, "token_budget": 300}},
			{"controls", map[string]any{"query": "coffee\x01\x1b[31m\u202e\ufeff", "token_budget": 300}},
			{"unknown agent", map[string]any{"query": "coffee", "token_budget": 300, "agent_id": "nobody", "session_id": "s1"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := postRecall(t, e, f.key, tc.req)
				checkRecallShape(t, rec, tc.req["token_budget"].(int))
				for _, it := range rec.Items {
					if !liveIDs[it.ID] {
						t.Errorf("recalled %s, not a live shared memory", it.ID)
					}
				}
			})
		}
		// The store still answers: nothing was dropped or broken.
		if after := len(listMemories(t, e, f.key)); after != before {
			t.Errorf("%d memories before the odd queries, %d after", before, after)
		}
		rec := postRecall(t, e, f.key, map[string]any{"query": "what coffee do I like?", "token_budget": 500})
		if !slices.Contains(itemIDs(rec.Items), f.prefEN.ID) {
			t.Errorf("recall broken after the odd queries: %v", itemIDs(rec.Items))
		}
	})
}

// TestRecallNUL: a NUL character (JSON "\u0000") in a recall's query,
// agent or session, or in the agent_id of /v1/context and /v1/boot, is
// valid JSON and valid UTF-8: it is answered, or refused with a 400, but
// never a 5xx. PostgreSQL text cannot hold NUL.
func TestRecallNUL(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRecallEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		create(t, e, key, `{"content":"The user's name is Ada","category":"life","priority":"P0"}`)
		create(t, e, key, `{"content":"The user likes coffee","category":"preference"}`)
		// PostgreSQL text cannot hold NUL: the server refuses it in every
		// JSON string and query parameter, on both engines alike.
		for _, tc := range []struct {
			name, method, path, body string
		}{
			{"query", "POST", "/v1/recall", `{"query":"coffee\u0000","token_budget":300}`},
			{"query only NUL", "POST", "/v1/recall", `{"query":"\u0000","token_budget":300}`},
			{"agent", "POST", "/v1/recall", `{"query":"coffee","token_budget":300,"agent_id":"a\u0000"}`},
			{"session", "POST", "/v1/recall", `{"query":"coffee","token_budget":300,"session_id":"s\u0000"}`},
			{"tag", "POST", "/v1/recall", `{"query":"coffee","token_budget":300,"tags":["t\u0000"]}`},
			{"route", "POST", "/v1/route", `{"query":"coffee\u0000"}`},
			{"context agent", "GET", "/v1/context?token_limit=300&agent_id=a%00", ""},
			{"context tags", "GET", "/v1/context?token_limit=300&tags=a%00", ""},
			{"boot agent", "GET", "/v1/boot?token_limit=300&agent_id=a%00", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(t, tc.method, tc.path, key, tc.body) // fails on any 5xx
				switch r.Status {
				case http.StatusOK:
				case http.StatusBadRequest:
					wantError(t, r, http.StatusBadRequest, engram.EINVALID)
				default:
					t.Errorf("status %s, want 200 or 400", r)
				}
			})
		}
	})
}

// TestRecallCountsAccess: a recall counts one access and sets the last
// access time of each memory it injected, and only those; an access is
// not a versioned change.
func TestRecallCountsAccess(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newRecallFixture(t, engine)
		e := f.e
		type state struct {
			version int64
			events  int
		}
		before := map[string]state{}
		for _, m := range listMemories(t, e, f.key) {
			before[m.ID] = state{m.Version, len(history(t, e, f.key, m.ID))}
		}
		start := time.Now().Add(-time.Second)
		rec := postRecall(t, e, f.key, map[string]any{"query": "what coffee do I like?", "token_budget": 2000, "fill": true})
		flushRecalls(t, e)
		injected := map[string]engram.RecallItem{}
		for _, it := range rec.Items {
			injected[it.ID] = it
		}
		if len(injected) < 3 {
			t.Fatalf("only %d memories recalled", len(injected))
		}
		for id, st := range before {
			m := getMemory(t, e, f.key, id)
			if it, ok := injected[id]; ok {
				if m.AccessCount != 1 || m.LastAccessedAt == nil || m.LastAccessedAt.Before(start) ||
					m.LastAccessedAt.After(time.Now().Add(time.Second)) {
					t.Errorf("injected %s: access_count %d, last_accessed_at %v", id, m.AccessCount, m.LastAccessedAt)
				}
				if it.Version != st.version {
					t.Errorf("item %s version %d, memory version %d", id, it.Version, st.version)
				}
			} else if m.AccessCount != 0 || m.LastAccessedAt != nil {
				t.Errorf("%s not injected but access_count %d, last_accessed_at %v", id, m.AccessCount, m.LastAccessedAt)
			}
			if m.Version != st.version {
				t.Errorf("%s version %d after a recall, was %d", id, m.Version, st.version)
			}
			if n := len(history(t, e, f.key, id)); n != st.events {
				t.Errorf("%s has %d history events after a recall, had %d", id, n, st.events)
			}
		}
		// A second recall counts a second access.
		postRecall(t, e, f.key, map[string]any{"query": "what coffee do I like?", "token_budget": 2000, "fill": true})
		flushRecalls(t, e)
		if m := getMemory(t, e, f.key, f.p0.ID); m.AccessCount != 2 || m.Version != before[f.p0.ID].version {
			t.Errorf("P0 after two recalls: access_count %d, version %d", m.AccessCount, m.Version)
		}
	})
}

// TestRecallConcurrent: recalls of a tenant whose routing model is not
// loaded yet, run at once and beside writes, all succeed, and each counts
// its access: the P0 memory every one of them injects (each asks for the
// identity block) ends with one access per recall.
func TestRecallConcurrent(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRecallEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		p0 := create(t, e, key, `{"content":"The user's name is Ada","category":"life","priority":"P0"}`)
		for i := 0; i < 10; i++ {
			create(t, e, key, fmt.Sprintf(`{"content":"coffee note %d 咖啡笔记","category":"preference"}`, i))
		}
		const workers, each = 6, 4
		statuses := make(chan string, workers*each+each)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					body := mustJSON(map[string]any{"query": []string{"coffee", "咖啡", "Ada"}[i%3], "token_budget": 300, "identity": true})
					req := httptest.NewRequest("POST", "/v1/recall", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer "+key)
					rec := httptest.NewRecorder()
					e.h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						statuses <- fmt.Sprintf("recall: %d %s", rec.Code, rec.Body)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				body := fmt.Sprintf(`{"content":"concurrent coffee write %d","category":"life"}`, i)
				req := httptest.NewRequest("POST", "/v1/memories", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusCreated {
					statuses <- fmt.Sprintf("write: %d %s", rec.Code, rec.Body)
				}
			}
		}()
		wg.Wait()
		close(statuses)
		for s := range statuses {
			t.Error(s)
		}
		flushRecalls(t, e)
		if m := getMemory(t, e, key, p0.ID); m.AccessCount != workers*each || m.Version != p0.Version {
			t.Errorf("P0 after %d recalls: access_count %d, version %d (was %d)", workers*each, m.AccessCount, m.Version, p0.Version)
		}
	})
}

// TestRecallTenantIsolation: a tenant never recalls another's memories,
// not even with their exact text, and another tenant's writes do not move
// its scores (BM25 statistics are per tenant).
func TestRecallTenantIsolation(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRecallEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		beta, _ := e.tenant(t, "beta")
		const shared = "The tomato beds need water every evening"
		var alphaIDs []string
		for _, body := range []string{
			`{"content":"Zanzibar launch codes are hidden in the red folder","category":"work","priority":"P0"}`,
			`{"content":"桑给巴尔项目的番茄预算","category":"work"}`,
			`{"content":"` + shared + `","category":"life"}`,
		} {
			alphaIDs = append(alphaIDs, create(t, e, alpha, body).ID)
		}
		var betaIDs []string
		for _, body := range []string{
			`{"content":"` + shared + `","category":"life"}`,
			`{"content":"Tomato seedlings go into the garden in May","category":"life"}`,
			`{"content":"Water the garden less when it rains","category":"life","tags":["garden"]}`,
			`{"content":"花园里的番茄需要每天浇水","category":"life"}`,
			`{"content":"The user prefers heirloom tomato varieties","category":"preference"}`,
			`{"content":"Quarterly report is due on Friday","category":"work"}`,
			`{"content":"The user is called Bea","category":"life","priority":"P0"}`,
		} {
			betaIDs = append(betaIDs, create(t, e, beta, body).ID)
		}
		noAlpha := func(t *testing.T, rec engram.Recall) {
			t.Helper()
			for _, it := range rec.Items {
				if slices.Contains(alphaIDs, it.ID) || !slices.Contains(betaIDs, it.ID) {
					t.Errorf("beta recalled %s (%q), not one of beta's memories", it.ID, it.Text)
				}
			}
			for _, s := range []string{"Zanzibar", "桑给巴尔"} {
				if strings.Contains(rec.Context, s) {
					t.Errorf("beta's context holds alpha's %q", s)
				}
			}
		}
		for _, q := range []string{"Zanzibar launch codes are hidden in the red folder", "桑给巴尔项目的番茄预算", shared} {
			rec := postRecall(t, e, beta, map[string]any{"query": q, "token_budget": 2000})
			checkRecallShape(t, rec, 2000)
			noAlpha(t, rec)
		}
		rec := postRecall(t, e, alpha, map[string]any{"query": "tomato garden water 番茄 浇水", "token_budget": 2000})
		for _, it := range rec.Items {
			if !slices.Contains(alphaIDs, it.ID) {
				t.Errorf("alpha recalled %s, not one of alpha's memories", it.ID)
			}
		}

		const query = "tomato garden water 番茄 浇水"
		betaCtx := storetest.Tenant(t, e.db, "beta")
		search := func() map[string]float64 {
			t.Helper()
			hits, err := e.lexical.SearchMemories(betaCtx, engram.LexicalQuery{Text: query, Limit: 50, Expand: true})
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]float64{}
			for _, h := range hits {
				out[h.Memory.ID] = h.Score
			}
			return out
		}
		rawBefore := search()
		recBefore := postRecall(t, e, beta, map[string]any{"query": query, "token_budget": 2000})
		if len(rawBefore) < 4 || len(recBefore.Items) < 4 {
			t.Fatalf("beta's query matches %d memories, recalls %d", len(rawBefore), len(recBefore.Items))
		}

		// alpha writes 100 memories in beta's words.
		batch := make([]map[string]any, 100)
		for i := range batch {
			batch[i] = map[string]any{"content": fmt.Sprintf("Tomato garden water log %d: 番茄 浇水 花园 garden tomato", i), "category": []string{"life", "work", "preference"}[i%3]}
		}
		wantStatus(t, e.do(t, "POST", "/v1/memories/batch", alpha, mustJSON(map[string]any{"memories": batch})), http.StatusOK)

		rawAfter := search()
		if len(rawAfter) != len(rawBefore) {
			t.Errorf("beta's raw search: %d hits before alpha's writes, %d after", len(rawBefore), len(rawAfter))
		}
		for id, s := range rawBefore {
			if rawAfter[id] != s {
				t.Errorf("beta's raw BM25 score of %s moved from %v to %v with alpha's writes", id, s, rawAfter[id])
			}
		}
		recAfter := postRecall(t, e, beta, map[string]any{"query": query, "token_budget": 2000})
		noAlpha(t, recAfter)
		if !slices.Equal(itemIDs(recBefore.Items), itemIDs(recAfter.Items)) {
			t.Fatalf("beta's recall changed with alpha's writes:\nbefore %v\nafter  %v", itemIDs(recBefore.Items), itemIDs(recAfter.Items))
		}
		for i, a := range recAfter.Items {
			b := recBefore.Items[i].Breakdown
			// Retention moves by the seconds between the two recalls;
			// everything that BM25 and the votes decide stays exact.
			if a.Breakdown.Relevance != b.Relevance || a.Breakdown.Reward != b.Reward || a.Breakdown.Confidence != b.Confidence ||
				a.Breakdown.Revision != b.Revision || math.Abs(a.Score-recBefore.Items[i].Score) > 1e-6 {
				t.Errorf("beta's item %s: breakdown %+v before alpha's writes, %+v after", a.ID, b, a.Breakdown)
			}
		}
	})
}

// contextAnswer is the body of GET /v1/context.
type contextAnswer struct {
	Context string `json:"context"`
	Items   []struct {
		ID       string `json:"id"`
		Key      string `json:"key"`
		Category string `json:"category"`
		Version  int64  `json:"version"`
		Text     string `json:"text"`
		Tokens   int    `json:"tokens"`
	} `json:"items"`
	TokensUsed int `json:"tokens_used"`
	TokenLimit int `json:"token_limit"`
}

func getContext(t testing.TB, e *env, key, query string) contextAnswer {
	t.Helper()
	r := e.do(t, "GET", "/v1/context?"+query, key, "")
	wantStatus(t, r, http.StatusOK)
	var a contextAnswer
	if err := json.Unmarshal(r.Body, &a); err != nil || a.Items == nil {
		t.Fatalf("context answer: %v: %s", err, r)
	}
	return a
}

// tokenLimitErrors checks the token_limit validation of a read block
// endpoint (path without query).
func tokenLimitErrors(t *testing.T, e *env, key, path string) {
	t.Helper()
	max := fmt.Sprint(maxRecallBudget)
	for _, tc := range []struct {
		query string
		parts []string
	}{
		{"", []string{"token_limit", "required"}},
		{"agent_id=a1", []string{"token_limit", "required"}},
		{"token_limit=", []string{"token_limit", "integer"}},
		{"token_limit=0", []string{"token_limit", max}},
		{"token_limit=-1", []string{"token_limit", max}},
		{"token_limit=abc", []string{"token_limit", "integer"}},
		{"token_limit=1.5", []string{"token_limit", "integer"}},
		{"token_limit=" + fmt.Sprint(maxRecallBudget+1), []string{"token_limit", max}},
		{"token_limit=99999999999999999999", []string{"token_limit"}},
		{"token_limit=100&token_limit=200", []string{"token_limit", "more than once"}},
		{"token_limit=100&limit=5", []string{"unknown query parameter", "limit"}},
		{"token_limit=100&q=coffee", []string{"unknown query parameter", "q"}},
	} {
		if slices.Contains(tc.parts, "required") && path == "/v1/boot" {
			continue // boot defaults its token_limit
		}
		t.Run(path+"?"+tc.query, func(t *testing.T) {
			wantError(t, e.do(t, "GET", path+"?"+tc.query, key, ""), http.StatusBadRequest, engram.EINVALID, tc.parts...)
		})
	}
}

// TestContextReadBlock: GET /v1/context renders "- key-or-id
// type-or-category text" lines, newest first, within token_limit, of the
// live memories the agent may see.
func TestContextReadBlock(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRecallEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		tok := storetest.Tokenizer(t)
		tokenLimitErrors(t, e, key, "/v1/context")

		empty := getContext(t, e, key, "token_limit=100")
		if empty.Context != "" || len(empty.Items) != 0 || empty.TokensUsed != 0 || empty.TokenLimit != 100 {
			t.Errorf("empty tenant's context: %+v", empty)
		}

		// Created one after the other, all of the default importance, so
		// that newest first is creation order reversed even when two
		// creation times collide.
		m1 := create(t, e, key, `{"content":"First note: the user drinks green tea","category":"life"}`)
		r := e.do(t, "PUT", "/v1/keys/user/preference/drink", key, `{"content":"green tea, no sugar","source":"user"}`)
		wantStatus(t, r, http.StatusOK)
		m2 := r.memory(t)
		m3 := create(t, e, key, `{"content":"Never deploy on Fridays","category":"work","type":"constraint","tags":["deploy"]}`)
		m4 := create(t, e, key, `{"content":"multi\nline\t\ttext   with  spaces 多行","category":"work","summary":"multi-line note"}`)
		expired := create(t, e, key, `{"content":"expired reminder","expires_at":"2001-01-01T00:00:00Z"}`)
		tomb := create(t, e, key, `{"content":"tombstoned reminder"}`)
		arch := create(t, e, key, `{"content":"archived reminder"}`)
		private := create(t, e, key, `{"content":"a1 private reminder","category":"work","agent_id":"a1"}`)
		wantStatus(t, e.do(t, "DELETE", "/v1/memories/"+tomb.ID, key, ""), http.StatusOK)
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+arch.ID, key, `{"archived":true}`), http.StatusOK)

		lines := map[string]string{
			m1.ID:      "- " + m1.ID + " life First note: the user drinks green tea",
			m2.ID:      "- /user/preference/drink preference green tea, no sugar",
			m3.ID:      "- " + m3.ID + " constraint Never deploy on Fridays",
			m4.ID:      "- " + m4.ID + " work multi line text with spaces 多行",
			private.ID: "- " + private.ID + " work a1 private reminder",
		}
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"token_limit=2000", []string{m4.ID, m3.ID, m2.ID, m1.ID}},
			{"token_limit=2000&tags=deploy,%20nope,", []string{m4.ID, m3.ID, m2.ID, m1.ID}},
			{"token_limit=2000&agent_id=a2", []string{m4.ID, m3.ID, m2.ID, m1.ID}},
			{"token_limit=2000&agent_id=a1", []string{private.ID, m4.ID, m3.ID, m2.ID, m1.ID}},
		} {
			t.Run(tc.query, func(t *testing.T) {
				a := getContext(t, e, key, tc.query)
				got := make([]string, len(a.Items))
				want := learning.Header
				for i, it := range a.Items {
					got[i] = it.ID
					want += "\n" + lines[it.ID]
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("items %v, want newest first %v", got, tc.want)
				}
				if a.Context != want {
					t.Errorf("context:\n%s\nwant:\n%s", a.Context, want)
				}
				if n := tok.Count(a.Context); n != a.TokensUsed || n > 2000 || a.TokenLimit != 2000 {
					t.Errorf("context counts %d tokens; tokens_used %d, token_limit %d", n, a.TokensUsed, a.TokenLimit)
				}
				for _, m := range []apiMemory{expired, tomb, arch} {
					if strings.Contains(a.Context, m.Content) {
						t.Errorf("context holds %q", m.Content)
					}
				}
			})
		}

		full := []string{m4.ID, m3.ID, m2.ID, m1.ID}
		for limit := 1; limit <= 60; limit++ {
			a := getContext(t, e, key, fmt.Sprintf("token_limit=%d", limit))
			if n := tok.Count(a.Context); n != a.TokensUsed || n > limit {
				t.Errorf("token_limit %d: context counts %d, tokens_used %d", limit, n, a.TokensUsed)
			}
			// What fits is taken in order: a subsequence of the full block.
			j := 0
			for _, it := range a.Items {
				for j < len(full) && full[j] != it.ID {
					j++
				}
				if j == len(full) {
					t.Errorf("token_limit %d: items %+v out of order", limit, a.Items)
					break
				}
				j++
				if !strings.Contains(a.Context, lines[it.ID]) && !strings.Contains(a.Context, it.Text) {
					t.Errorf("token_limit %d: item %s not in the context", limit, it.ID)
				}
			}
			if (len(a.Items) == 0) != (a.Context == "") {
				t.Errorf("token_limit %d: %d items, context %q", limit, len(a.Items), a.Context)
			}
		}
	})
}

// getBoot reads GET /v1/boot?query and checks that its context re-counts
// to tokens_used.
func getBoot(t testing.TB, e *env, key, query string) engram.Boot {
	t.Helper()
	r := e.do(t, "GET", "/v1/boot?"+query, key, "")
	wantStatus(t, r, http.StatusOK)
	var b engram.Boot
	if err := json.Unmarshal(r.Body, &b); err != nil || b.Memories == nil {
		t.Fatalf("boot answer: %v: %s", err, r)
	}
	if n := storetest.Tokenizer(t).Count(b.Context); n != b.TokensUsed {
		t.Errorf("boot context counts %d tokens, tokens_used %d", n, b.TokensUsed)
	}
	return b
}

func memoryIDs(ms []*engram.Memory) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// TestBoot: GET /v1/boot injects the persona first, then the P0 identity
// memories the agent may see, within token_limit.
func TestBoot(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRecallEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		tok := storetest.Tokenizer(t)
		tokenLimitErrors(t, e, key, "/v1/boot")

		b := getBoot(t, e, key, "token_limit=500")
		if b.Persona != "" || len(b.Memories) != 0 || b.Context != "" {
			t.Errorf("empty tenant's boot: %+v", b)
		}
		if b := getBoot(t, e, key, "agent_id=a1"); b.Persona != "" || b.Context != "" {
			t.Errorf("boot without token_limit (defaulted): %+v", b)
		}

		p0 := create(t, e, key, `{"content":"The user's name is Ada","category":"life","priority":"P0"}`)
		p0zh := create(t, e, key, `{"content":"用户住在上海","category":"life","priority":"P0"}`)
		p2 := create(t, e, key, `{"content":"The user likes tea","category":"preference"}`)
		privateP0 := create(t, e, key, `{"content":"a1 speaks French with the user","category":"life","priority":"P0","agent_id":"a1"}`)
		expiredP0 := create(t, e, key, `{"content":"expired identity","priority":"P0","expires_at":"2001-01-01T00:00:00Z"}`)

		b = getBoot(t, e, key, "token_limit=500")
		if b.Persona != "" {
			t.Errorf("persona %q before one was set", b.Persona)
		}
		if ids := memoryIDs(b.Memories); !slices.Equal(ids, []string{p0zh.ID, p0.ID}) {
			t.Errorf("boot memories %v, want the P0 memories %v newest first", ids, []string{p0zh.ID, p0.ID})
		}
		if want := "[Agent Memory]\n- 用户住在上海\n- The user's name is Ada"; b.Context != want {
			t.Errorf("boot context %q, want %q", b.Context, want)
		}

		r := e.do(t, "PUT", "/v1/keys/agent/persona", key, `{"content":"You are Ada's assistant","source":"setup"}`)
		wantStatus(t, r, http.StatusOK)
		for _, agent := range []string{"", "a1"} {
			q := "token_limit=500"
			if agent != "" {
				q += "&agent_id=" + agent
			}
			b = getBoot(t, e, key, q)
			if b.Persona != "You are Ada's assistant" {
				t.Errorf("persona %q", b.Persona)
			}
			if !strings.HasPrefix(b.Context, "[Agent Memory]\n- You are Ada's assistant\n") {
				t.Errorf("boot context does not start with the header and the persona: %q", b.Context)
			}
			ids := memoryIDs(b.Memories)
			for _, m := range []apiMemory{p0, p0zh} {
				if !slices.Contains(ids, m.ID) || !strings.Contains(b.Context, "- "+m.Content) {
					t.Errorf("P0 %q missing from boot (%v): %q", m.Content, ids, b.Context)
				}
			}
			for _, m := range []apiMemory{p2, expiredP0} {
				if slices.Contains(ids, m.ID) || strings.Contains(b.Context, m.Content) {
					t.Errorf("boot holds %q", m.Content)
				}
			}
			if got := slices.Contains(ids, privateP0.ID); got != (agent == "a1") {
				t.Errorf("agent %q: a1's private P0 in boot = %v", agent, got)
			}
			if b.TokensUsed > 500 {
				t.Errorf("boot uses %d tokens of 500", b.TokensUsed)
			}
		}

		// The persona goes first: the smallest limit that fits anything
		// fits the persona alone, and every larger one starts with it.
		only := "[Agent Memory]\n- You are Ada's assistant"
		first := 0
		for l := 1; l <= 40; l++ {
			b = getBoot(t, e, key, fmt.Sprintf("token_limit=%d", l))
			if b.TokensUsed > l {
				t.Errorf("boot with token_limit %d uses %d tokens", l, b.TokensUsed)
			}
			if b.Persona != "You are Ada's assistant" {
				t.Errorf("token_limit %d: persona %q", l, b.Persona)
			}
			switch {
			case b.Context == "":
				if first > 0 {
					t.Errorf("token_limit %d: empty boot context, token_limit %d fitted the persona", l, first)
				}
			case first == 0:
				first = l
				if b.Context != only {
					t.Errorf("token_limit %d, the first to fit anything: %q, want the persona alone %q", l, b.Context, only)
				}
			case !strings.HasPrefix(b.Context, only):
				t.Errorf("token_limit %d: boot context %q does not start with the persona", l, b.Context)
			}
		}
		if first == 0 || first > tok.Count(learning.Header)+tok.Count("\n")+tok.Count("- You are Ada's assistant") {
			t.Errorf("the persona line first fits at token_limit %d", first)
		}

		// An agent's own persona, at /agents/<agent_id>/persona, replaces
		// the tenant's for that agent only.
		r = e.do(t, "PUT", "/v1/keys/agents/a1/persona", key, `{"content":"You are a1, Ada's travel agent","source":"setup","agent_id":"a1"}`)
		wantStatus(t, r, http.StatusOK)
		if b = getBoot(t, e, key, "token_limit=500&agent_id=a1"); b.Persona != "You are a1, Ada's travel agent" ||
			!strings.HasPrefix(b.Context, "[Agent Memory]\n- You are a1, Ada's travel agent\n") {
			t.Errorf("a1's boot: persona %q, context %q", b.Persona, b.Context)
		}
		for _, q := range []string{"token_limit=500", "token_limit=500&agent_id=a2"} {
			if b = getBoot(t, e, key, q); b.Persona != "You are Ada's assistant" || strings.Contains(b.Context, "travel agent") {
				t.Errorf("%s: persona %q, context %q", q, b.Persona, b.Context)
			}
		}

		// A tombstoned persona is gone.
		wantStatus(t, e.do(t, "DELETE", "/v1/keys/agent/persona", key, ""), http.StatusOK)
		b = getBoot(t, e, key, "token_limit=500")
		if b.Persona != "" || strings.Contains(b.Context, "Ada's assistant") {
			t.Errorf("tombstoned persona still booted: %+v", b)
		}
	})
}

// TestBootPersonaNotInjectedWhenArchivedOrPrivate: the persona is a
// memory like any other: archived it never qualifies (DESIGN §3: "Expired,
// tombstoned and archived memories never do"), and written for one agent
// it is private to that agent (DESIGN §1).
func TestBootPersonaNotInjectedWhenArchivedOrPrivate(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRecallEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		other, _ := e.tenant(t, "beta")

		r := e.do(t, "PUT", "/v1/keys/agent/persona", key, `{"content":"You are Ada's assistant","source":"setup"}`)
		wantStatus(t, r, http.StatusOK)
		persona := r.memory(t)
		if b := getBoot(t, e, other, "token_limit=500"); b.Persona != "" {
			t.Errorf("beta boots alpha's persona %q", b.Persona)
		}

		t.Run("archived", func(t *testing.T) {
			wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+persona.ID, key, `{"archived":true}`), http.StatusOK)
			// FindMemoryByKey returns archived memories (it checks only
			// valid and expiry): Recaller.persona must skip them itself.
			b := getBoot(t, e, key, "token_limit=500")
			if b.Persona != "" || strings.Contains(b.Context, "Ada's assistant") {
				t.Errorf("archived persona booted: persona %q, context %q", b.Persona, b.Context)
			}
			wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+persona.ID, key, `{"archived":false}`), http.StatusOK)
		})

		t.Run("private to another agent", func(t *testing.T) {
			r := e.do(t, "PUT", "/v1/keys/agent/persona", key, `{"content":"You are a2's own persona","source":"setup","agent_id":"a2"}`)
			wantStatus(t, r, http.StatusOK)
			if b := getBoot(t, e, key, "token_limit=500&agent_id=a2"); b.Persona != "You are a2's own persona" {
				t.Errorf("a2's persona not booted for a2: %q", b.Persona)
			}
			// FindMemoryByKey does not look at agents: Recaller.persona
			// must skip a persona private to another agent itself.
			for _, q := range []string{"token_limit=500", "token_limit=500&agent_id=a1"} {
				if b := getBoot(t, e, key, q); b.Persona != "" || strings.Contains(b.Context, "a2's own persona") {
					t.Errorf("%s: a2's private persona booted: %q", q, b.Persona)
				}
			}
		})
	})
}

// TestRouteEndpoint: POST /v1/route classifies bilingual queries.
func TestRouteEndpoint(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newRecallEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		route := func(t *testing.T, query string) engram.Route {
			t.Helper()
			r := e.do(t, "POST", "/v1/route", key, mustJSON(map[string]string{"query": query}))
			wantStatus(t, r, http.StatusOK)
			var rt engram.Route
			if err := json.Unmarshal(r.Body, &rt); err != nil {
				t.Fatal(err)
			}
			if len(rt.Domains) == 0 || len(rt.Categories) == 0 || !slices.Contains(rt.Layers, engram.LayerL2) {
				t.Errorf("route of %q: %+v", query, rt)
			}
			for _, d := range rt.Domains {
				if !(d.Score >= 0 && d.Score <= 1) {
					t.Errorf("route of %q: domain %+v", query, d)
				}
			}
			return rt
		}
		if rt := route(t, "我应该选哪个方案？"); rt.Intent != engram.IntentDecide {
			t.Errorf("我应该选哪个方案？: intent %q, want decide", rt.Intent)
		}
		if rt := route(t, "why did the deploy fail?"); rt.Mode != engram.ModeCausal {
			t.Errorf("why did the deploy fail?: mode %q, want causal", rt.Mode)
		}
		for _, q := range []string{"🙂🙃", "?!…", strings.Repeat("咖啡 coffee ", 5000)} {
			route(t, q)
		}
		for _, tc := range []struct{ name, body string }{
			{"empty", `{"query":""}`},
			{"blank", `{"query":"  \n "}`},
			{"missing", `{}`},
			{"unknown field", `{"query":"coffee","q":"x"}`},
			{"not a string", `{"query":["coffee"]}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, e.do(t, "POST", "/v1/route", key, tc.body), http.StatusBadRequest, engram.EINVALID)
			})
		}
		wantError(t, e.do(t, "POST", "/v1/route", "", `{"query":"coffee"}`), http.StatusUnauthorized, engram.EUNAUTHORIZED)
		for _, p := range []string{"/v1/recall", "/v1/context?token_limit=10", "/v1/boot?token_limit=10"} {
			method := "GET"
			if p == "/v1/recall" {
				method = "POST"
			}
			wantError(t, e.do(t, method, p, "", `{"query":"coffee","token_budget":10}`), http.StatusUnauthorized, engram.EUNAUTHORIZED)
		}
	})
}
