package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/sleep"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// fbClock is the store's clock in these tests: the real time until a
// test pins it, safe for concurrent use.
type fbClock struct {
	mu    sync.Mutex
	fixed time.Time
}

func (c *fbClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fixed.IsZero() {
		return time.Now()
	}
	return c.fixed
}

func (c *fbClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fixed = t
}

// fbEnv is a server with recall and feedback wired as cmd/engram does,
// served in process and on a real listener (for HTTP trailers), with a
// second connection to its database to count rows.
type fbEnv struct {
	*env
	clock   *fbClock
	opts    store.Options
	raw     *gorm.DB
	reflect *reflections.Service
	sleep   *sleep.Sleeper
	dir     string // where reflection files go
}

// newFeedbackEnv wires the router, the recall pipeline, the feedback
// service and the exporter like cmd/engram's NewServices and exporter.
func newFeedbackEnv(t testing.TB, engine string) *fbEnv {
	t.Helper()
	return newFeedbackEnvWith(t, storetest.Options(t, engine))
}

// newFeedbackEnvWith is newFeedbackEnv on the database o names, so that
// two servers can share one.
func newFeedbackEnvWith(t testing.TB, o store.Options) *fbEnv {
	t.Helper()
	clock := &fbClock{}
	o.Now = clock.now
	db := storetest.OpenWith(t, o)
	cfg := configs.Default()
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	routes := router.NewService(router.New(rcfg), db, 0)
	scoring := learning.NewScoreConfig(cfg.Scoring)
	if err := scoring.Validate(); err != nil {
		t.Fatal(err)
	}
	scorer := learning.NewScorer(scoring, clock.now)
	rec := learning.NewRecaller(indextest.Wrap(db), routes, scorer, storetest.Tokenizer(t), cfg.Recall, clock.now).WithLinks(db)
	lim := cfg.Limits
	dir := t.TempDir()
	refl := reflections.New(db, reflections.Config{Categories: cfg.Memory.Categories, MinGroup: 3, Dir: dir}, nil)
	sleeper := sleep.New(db, refl, sleep.Config{MergeSimilarity: cfg.Sleep.MergeSimilarity,
		ArchiveBelow: cfg.Sleep.ArchiveBelow, CompactAfter: cfg.Sleep.CompactAfter, Scoring: cfg.Scoring}, clock.now)
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Router: routes, Recall: rec, Reflections: refl,
		Feedback: learning.NewFeedback(db, scorer, engram.DefaultFeedbackConfig()),
		Export: func(w io.Writer, format string) (server.PairEncoder, bool, error) {
			f, err := learning.ParseFormat(format)
			if err != nil {
				return nil, false, err
			}
			return learning.NewEncoder(w, f), f.Paired(), nil
		},
		Limits: server.Limits{MaxBodyBytes: lim.MaxBodyBytes, MaxJSONDepth: lim.MaxJSONDepth, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &fbEnv{env: &env{db: db, h: s, srv: srv}, clock: clock, opts: o, reflect: refl, sleep: sleeper, dir: dir}
}

// count returns the number of rows of every table feedback can write.
func (e *fbEnv) count(t testing.TB) map[string]int64 {
	t.Helper()
	if e.raw == nil {
		var dial gorm.Dialector
		if e.opts.Driver == "postgres" {
			dial = postgres.Open(e.opts.DSN)
		} else {
			dial = sqlite.Open("file:" + filepath.Join(e.opts.DataDir, "engram.db") + "?_query_only=true&_busy_timeout=5000")
		}
		g, err := gorm.Open(dial, &gorm.Config{Logger: logger.Discard})
		if err != nil {
			t.Fatal(err)
		}
		e.raw = g
		t.Cleanup(func() {
			if s, err := g.DB(); err == nil {
				_ = s.Close()
			}
		})
	}
	out := map[string]int64{}
	for _, table := range []string{"interactions", "feedback", "feedback_credits", "feedback_pending", "pairs", "memories", "memory_events", "recalls"} {
		var n int64
		if err := e.raw.Table(table).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// tenantCtx returns a context acting for tenant name, for reading the
// store directly.
func (e *fbEnv) tenantCtx(t testing.TB, name string) context.Context {
	t.Helper()
	tn, err := e.db.FindTenant(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return engram.NewContextWithTenant(context.Background(), tn.ID)
}

func (e *fbEnv) interaction(t testing.TB, key string, body map[string]any) engram.Interaction {
	t.Helper()
	r := e.do(t, "POST", "/v1/interactions", key, mustJSON(body))
	wantStatus(t, r, http.StatusCreated)
	var in engram.Interaction
	if err := json.Unmarshal(r.Body, &in); err != nil || !strings.HasPrefix(in.ID, "int_") || in.GroupKey == "" || in.CreatedAt.IsZero() {
		t.Fatalf("interaction answer: %v: %s", err, r)
	}
	return in
}

// feedback posts one feedback and decodes its result, wanting status.
func (e *fbEnv) feedback(t testing.TB, key string, body map[string]any, status int) (engram.FeedbackResult, *response) {
	t.Helper()
	r := e.do(t, "POST", "/v1/feedback", key, mustJSON(body))
	wantStatus(t, r, status)
	var res engram.FeedbackResult
	if err := json.Unmarshal(r.Body, &res); err != nil || !strings.HasPrefix(res.FeedbackID, "fb_") {
		t.Fatalf("feedback answer: %v: %s", err, r)
	}
	if !strings.Contains(string(r.Body), `"credited":[`) || !strings.Contains(string(r.Body), `"pairs":[`) {
		t.Errorf("credited and pairs are not JSON lists: %s", r)
	}
	return res, r
}

// fbExport is one GET /v1/pairs answer read to its end.
type fbExport struct {
	r     *response
	lines []string
	next  string // the Engram-Next-Cursor trailer
	// declared: the answer announced the trailer (Go's client moves the
	// Trailer header into Response.Trailer's keys).
	declared bool
}

// export sends GET /v1/pairs?query over a real connection, drains the
// body and reads the trailer; a 200 answer must be whole JSON lines.
func (e *fbEnv) export(t testing.TB, key, query string) fbExport {
	t.Helper()
	req, err := http.NewRequest("GET", e.srv.URL+"/v1/pairs?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("GET /v1/pairs?%s: %v", query, err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("GET /v1/pairs?%s: reading the body: %v", query, err)
	}
	out := fbExport{r: &response{Status: res.StatusCode, Header: res.Header, Body: body}}
	noServerError(t, "GET", "/v1/pairs?"+query, out.r)
	if res.StatusCode != http.StatusOK {
		return out
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
		t.Errorf("GET /v1/pairs?%s: Content-Type %q", query, ct)
	}
	if len(body) > 0 {
		if body[len(body)-1] != '\n' {
			t.Errorf("GET /v1/pairs?%s: body does not end in a line break", query)
		}
		out.lines = strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	}
	for _, l := range out.lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("GET /v1/pairs?%s: line is not JSON: %s", query, l)
		}
	}
	_, out.declared = res.Trailer["Engram-Next-Cursor"]
	out.next = res.Trailer.Get("Engram-Next-Cursor")
	return out
}

func (e *fbEnv) memory(t testing.TB, key, id string) engram.Memory {
	t.Helper()
	return getMemory(t, e.env, key, id)
}

func (e *fbEnv) events(t testing.TB, key, id string) []engram.MemoryEvent {
	t.Helper()
	r := e.do(t, "GET", "/v1/memories/"+id+"/history", key, "")
	wantStatus(t, r, http.StatusOK)
	var p struct {
		Items []engram.MemoryEvent `json:"items"`
	}
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// sameCredit fails unless the credited state equals the stored memory.
func sameCredit(t testing.TB, c engram.CreditedMemory, m engram.Memory) {
	t.Helper()
	if c.ID != m.ID || c.Version != m.Version || c.Reward != m.Reward || c.Confidence != m.Confidence || c.Stability != m.Stability ||
		c.NeedsRevision != m.NeedsRevision || c.UpCount != m.UpCount || c.DownCount != m.DownCount {
		t.Errorf("credited %+v; GET /v1/memories/%s has version %d reward %v confidence %v stability %v needs_revision %v up %d down %d",
			c, m.ID, m.Version, m.Reward, m.Confidence, m.Stability, m.NeedsRevision, m.UpCount, m.DownCount)
	}
}

// TestFeedbackHappyPath: memories, a recall, two regenerations of one
// turn (a Chinese multi-turn chat prompt), thumbs down and up: the
// second completes a regeneration pair, every credit is the stored
// memory and an event in its history, every format exports exactly the
// expected lines, and a rollback undoes the feedback.
func TestFeedbackHappyPath(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, keyID := e.tenant(t, "alpha")
		for _, body := range []string{
			`{"content":"The user likes a flat white with oat milk","category":"preference"}`,
			`{"content":"我喜欢喝燕麦拿铁咖啡，不加糖","category":"preference"}`,
			`{"content":"The user drinks coffee every morning at eight","category":"life"}`,
			`{"content":"The deploy pipeline runs on Fridays","category":"work"}`,
		} {
			create(t, e.env, key, body)
		}
		rec := postRecall(t, e.env, key, map[string]any{"query": "what coffee do I like? 咖啡", "token_budget": 2000})
		if len(rec.Items) < 2 {
			t.Fatalf("recall injected %d memories, want at least 2", len(rec.Items))
		}
		recalled := itemIDs(rec.Items)
		slices.Sort(recalled)
		pre := map[string]engram.Memory{}
		for _, id := range recalled {
			pre[id] = e.memory(t, key, id)
		}

		msgs := []engram.Message{
			{Role: "system", Content: "You are a helpful barista assistant."},
			{Role: "user", Content: "我想喝咖啡，有什么推荐？"},
			{Role: "assistant", Content: "What do you usually drink?"},
			{Role: "user", Content: "Something with oat milk, please."},
		}
		const promptText = "system: You are a helpful barista assistant.\nuser: 我想喝咖啡，有什么推荐？\nassistant: What do you usually drink?\nuser: Something with oat milk, please."
		const respA, respB = "Try an espresso.", "燕麦拿铁 & a flat white with oat milk"
		post := func(response string) engram.Interaction {
			t.Helper()
			in := e.interaction(t, key, map[string]any{"prompt": msgs, "response": response, "recall_id": rec.ID,
				"session_id": "sess-1", "turn_id": "turn-7", "model": "gpt-test"})
			if in.Prompt != promptText || !slices.Equal(in.Messages, msgs) || in.Response != response || in.RecallID != rec.ID ||
				in.SessionID != "sess-1" || in.TurnID != "turn-7" || in.Model != "gpt-test" {
				t.Errorf("interaction %+v", in)
			}
			return in
		}
		a, b := post(respA), post(respB)
		if a.GroupKey != b.GroupKey || a.ID == b.ID {
			t.Errorf("two answers to one turn: ids %s %s, group keys %q %q", a.ID, b.ID, a.GroupKey, b.GroupKey)
		}

		check := func(res engram.FeedbackResult, signal float64) {
			t.Helper()
			if res.Signal != signal || res.Replayed {
				t.Errorf("signal %v replayed %v, want %v", res.Signal, res.Replayed, signal)
			}
			var ids []string
			for _, c := range res.Credited {
				ids = append(ids, c.ID)
				sameCredit(t, c, e.memory(t, key, c.ID))
				if c.Capped {
					t.Errorf("credit %+v capped", c)
				}
			}
			if !slices.Equal(ids, recalled) {
				t.Errorf("credited %v, want the recalled memories %v in id order", ids, recalled)
			}
		}
		fa, _ := e.feedback(t, key, map[string]any{"interaction_id": a.ID, "thumb": "down", "reason": "too strong"}, http.StatusCreated)
		check(fa, -1)
		if len(fa.Pairs) != 0 {
			t.Errorf("a lone thumb completed pairs %v", fa.Pairs)
		}
		fb, _ := e.feedback(t, key, map[string]any{"interaction_id": b.ID, "thumb": "up"}, http.StatusCreated)
		check(fb, 1)
		if len(fb.Pairs) != 1 || !strings.HasPrefix(fb.Pairs[0], "pair_") {
			t.Fatalf("the second judgement completed pairs %v, want one", fb.Pairs)
		}

		// The stored pair and its provenance.
		var pairs []*engram.Pair
		if _, err := e.db.EachPair(e.tenantCtx(t, "alpha"), engram.PairFilter{}, func(p *engram.Pair) error {
			pairs = append(pairs, p)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var refs []engram.MemoryRef
		for _, it := range rec.Items {
			refs = append(refs, engram.MemoryRef{ID: it.ID, Version: it.Version})
		}
		if len(pairs) != 1 {
			t.Fatalf("%d pairs stored, want 1", len(pairs))
		}
		p := pairs[0]
		if p.ID != fb.Pairs[0] || p.Kind != engram.PairRegeneration || p.Margin != 2 || p.Chosen != respB || p.Rejected != respA ||
			p.ChosenInteractionID != b.ID || p.RejectedInteractionID != a.ID || !slices.Equal(p.FeedbackIDs, []string{fb.FeedbackID, fa.FeedbackID}) ||
			!slices.Equal(p.ChosenMemories, refs) || !slices.Equal(p.RejectedMemories, refs) || p.Prompt != promptText ||
			!slices.Equal(p.Messages, msgs) || p.Category != rec.Route.Domains[0].Name {
			t.Errorf("stored pair %+v", p)
		}

		// Every format, exactly.
		const msgsJSON = `[{"role":"system","content":"You are a helpful barista assistant."},{"role":"user","content":"我想喝咖啡，有什么推荐？"},` +
			`{"role":"assistant","content":"What do you usually drink?"},{"role":"user","content":"Something with oat milk, please."}]`
		const promptJSON = `"system: You are a helpful barista assistant.\nuser: 我想喝咖啡，有什么推荐？\nassistant: What do you usually drink?\nuser: Something with oat milk, please."`
		const chosenMsgs = `[{"role":"assistant","content":"燕麦拿铁 & a flat white with oat milk"}]`
		const rejectedMsgs = `[{"role":"assistant","content":"Try an espresso."}]`
		for format, want := range map[string][]string{
			"trl":                {`{"prompt":` + promptJSON + `,"chosen":"燕麦拿铁 & a flat white with oat milk","rejected":"Try an espresso."}`},
			"trl-conversational": {`{"prompt":` + msgsJSON + `,"chosen":` + chosenMsgs + `,"rejected":` + rejectedMsgs + `}`},
			"openai":             {`{"input":{"messages":` + msgsJSON + `},"preferred_output":` + chosenMsgs + `,"non_preferred_output":` + rejectedMsgs + `}`},
			"trl-unpaired": {
				`{"prompt":` + promptJSON + `,"completion":"Try an espresso.","label":false}`,
				`{"prompt":` + promptJSON + `,"completion":"燕麦拿铁 & a flat white with oat milk","label":true}`,
			},
		} {
			x := e.export(t, key, "format="+format)
			wantStatus(t, x.r, http.StatusOK)
			if !slices.Equal(x.lines, want) || x.next != "" {
				t.Errorf("format %s (next %q):\n got %s\nwant %s", format, x.next, strings.Join(x.lines, "\n     "), strings.Join(want, "\n     "))
			}
		}

		// History: one feedback event per credit; rollback undoes them.
		for _, id := range recalled {
			before := pre[id]
			evs := e.events(t, key, id)
			var fbEvents []engram.MemoryEvent
			for _, ev := range evs {
				if ev.Action == engram.ActionFeedback {
					fbEvents = append(fbEvents, ev)
				}
			}
			if len(fbEvents) != 2 || len(evs) != int(before.Version)+2 {
				t.Fatalf("memory %s: %d events, %d of them feedback; want 2 feedback events after version %d", id, len(evs), len(fbEvents), before.Version)
			}
			for i, ev := range fbEvents {
				if ev.Version != before.Version+int64(i)+1 || ev.Before == nil || ev.After == nil || ev.Actor.KeyID != keyID ||
					ev.Before.Version != ev.Version-1 || ev.After.Version != ev.Version {
					t.Errorf("memory %s feedback event %d: %+v", id, i, ev)
				}
			}
			// How far each memory moves is the learning policy's business;
			// the direction is not.
			if d := fbEvents[0].After; d.DownCount-before.DownCount > 1 || d.UpCount != before.UpCount || d.Confidence >= before.Confidence {
				t.Errorf("memory %s after the thumb down: down %d up %d confidence %v (before %d %d %v)", id, d.DownCount, d.UpCount, d.Confidence,
					before.DownCount, before.UpCount, before.Confidence)
			}
			if d, u := fbEvents[0].After, fbEvents[1].After; u.UpCount-d.UpCount > 1 || u.DownCount != d.DownCount || u.Confidence <= d.Confidence {
				t.Errorf("memory %s after the thumb up: up %d down %d confidence %v (before %d %d %v)", id, u.UpCount, u.DownCount, u.Confidence,
					d.UpCount, d.DownCount, d.Confidence)
			}
			// The events hold exactly the states the feedback answers gave.
			for i, res := range []engram.FeedbackResult{fa, fb} {
				for _, c := range res.Credited {
					if c.ID == id {
						sameCredit(t, c, *fbEvents[i].After)
					}
				}
			}
			r := e.do(t, "POST", "/v1/memories/"+id+"/rollback", key, fmt.Sprintf(`{"version":%d}`, before.Version))
			wantStatus(t, r, http.StatusOK)
			got := e.memory(t, key, id)
			if got.Version != before.Version+3 || got.Reward != before.Reward || got.Confidence != before.Confidence ||
				got.Stability != before.Stability || got.NeedsRevision != before.NeedsRevision || got.UpCount != before.UpCount ||
				got.DownCount != before.DownCount || got.Content != before.Content {
				t.Errorf("memory %s rolled back to version %d: %+v; before the feedback: %+v", id, before.Version, got, before)
			}
			if evs := e.events(t, key, id); evs[len(evs)-1].Action != engram.ActionRollback {
				t.Errorf("memory %s: last event %q, want rollback", id, evs[len(evs)-1].Action)
			}
		}
	})
}

// TestFeedbackHTTPGrouping: over HTTP, answers without a turn id group by
// session and prompt modulo white space; another session never pairs.
func TestFeedbackHTTPGrouping(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		judge := func(session, prompt, response, thumb string) engram.FeedbackResult {
			t.Helper()
			in := e.interaction(t, key, map[string]any{"prompt": prompt, "response": response, "session_id": session})
			res, _ := e.feedback(t, key, map[string]any{"interaction_id": in.ID, "thumb": thumb}, http.StatusCreated)
			return res
		}
		judge("s1", "Which tea is best?", "Green tea.", "down")
		if res := judge("s1", "  Which  tea\n is\tbest? ", "Black tea.", "up"); len(res.Pairs) != 1 {
			t.Errorf("same session, prompt equal modulo white space: pairs %v, want one", res.Pairs)
		}
		judge("s2", "Which tea is best?", "Oolong.", "down")
		if res := judge("s3", "Which tea is best?", "Rooibos.", "up"); len(res.Pairs) != 0 {
			t.Errorf("different sessions: pairs %v, want none", res.Pairs)
		}
		x := e.export(t, key, "format=trl-conversational")
		want := []string{`{"prompt":[{"role":"user","content":"  Which  tea\n is\tbest? "}],"chosen":[{"role":"assistant","content":"Black tea."}],` +
			`"rejected":[{"role":"assistant","content":"Green tea."}]}`}
		if !slices.Equal(x.lines, want) {
			t.Errorf("export:\n got %q\nwant %q", x.lines, want)
		}
	})
}

// TestFeedbackIdempotencyHTTP: a repeated idempotency key answers 200
// with the first result marked replayed and moves nothing; concurrent
// submissions with one key apply exactly once.
func TestFeedbackIdempotencyHTTP(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		m := create(t, e.env, key, `{"content":"The user likes a cortado","category":"preference"}`)
		body := map[string]any{"memory_id": m.ID, "thumb": "up", "idempotency_key": "req-1"}
		first, r1 := e.feedback(t, key, body, http.StatusCreated)
		second, r2 := e.feedback(t, key, body, http.StatusOK)
		if first.Replayed || !second.Replayed {
			t.Errorf("replayed: first %v, second %v", first.Replayed, second.Replayed)
		}
		o1, o2 := r1.object(t), r2.object(t)
		if o2["replayed"] != true {
			t.Errorf("replay body %s", r2)
		}
		delete(o2, "replayed")
		if mustJSON(o1) != mustJSON(o2) {
			t.Errorf("replay differs from the first answer:\nfirst  %s\nreplay %s", r1.Body, r2.Body)
		}
		// Another judgement under the same key is the same submission.
		third, _ := e.feedback(t, key, map[string]any{"memory_id": m.ID, "thumb": "down", "idempotency_key": "req-1"}, http.StatusOK)
		if !third.Replayed || third.FeedbackID != first.FeedbackID {
			t.Errorf("same key, other body: %+v", third)
		}
		got := e.memory(t, key, m.ID)
		if got.UpCount != 1 || got.DownCount != 0 || got.Version != m.Version+1 {
			t.Errorf("after one key three times: up %d down %d version %d; want moved once", got.UpCount, got.DownCount, got.Version)
		}
		// The key is the tenant's own.
		beta, _ := e.tenant(t, "beta")
		bm := create(t, e.env, beta, `{"content":"Beta likes chai","category":"preference"}`)
		if res, _ := e.feedback(t, beta, map[string]any{"memory_id": bm.ID, "thumb": "up", "idempotency_key": "req-1"}, http.StatusCreated); res.Replayed ||
			len(res.Credited) != 1 || res.Credited[0].ID != bm.ID {
			t.Errorf("beta's req-1: %+v", res)
		}

		c := create(t, e.env, key, `{"content":"The user likes a macchiato","category":"preference"}`)
		before := e.count(t)
		const n = 8
		statuses := make([]int, n)
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := e.do(t, "POST", "/v1/feedback", key, mustJSON(map[string]any{"memory_id": c.ID, "thumb": "up", "idempotency_key": "burst"}))
				statuses[i] = r.Status
				var res engram.FeedbackResult
				_ = json.Unmarshal(r.Body, &res)
				ids[i] = res.FeedbackID
			})
		}
		wg.Wait()
		created := 0
		for i, s := range statuses {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusOK:
			default:
				t.Errorf("submission %d: status %d", i, s)
			}
			if ids[i] != ids[0] || ids[i] == "" {
				t.Errorf("feedback ids %q and %q for one key", ids[i], ids[0])
			}
		}
		after := e.count(t)
		got = e.memory(t, key, c.ID)
		if created != 1 || got.UpCount != 1 || got.Version != c.Version+1 || after["feedback"] != before["feedback"]+1 ||
			after["memory_events"] != before["memory_events"]+1 {
			t.Errorf("%d concurrent submissions of one key: %d created, up_count %d, version %d, feedback rows +%d, events +%d; want once",
				n, created, got.UpCount, got.Version, after["feedback"]-before["feedback"], after["memory_events"]-before["memory_events"])
		}
	})
}

// TestFeedbackRaterCapHTTP: 50 down votes of one rater move a memory three
// times; the rest answer capped. Without a rater the API key is the
// rater ("key:<key id>"), so a second key of the tenant still counts.
func TestFeedbackRaterCapHTTP(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, keyID := e.tenant(t, "alpha")
		key2, _ := e.tenant(t, "alpha")
		m := create(t, e.env, key, `{"content":"The user likes a ristretto","category":"preference"}`)
		for i := range 50 {
			body := map[string]any{"memory_id": m.ID, "thumb": "down", "rater": "troll"}
			if i%2 == 1 {
				body["idempotency_key"] = fmt.Sprint("troll-", i)
			}
			res, r := e.feedback(t, key, body, http.StatusCreated)
			c := res.Credited[0]
			applied := int64(min(i+1, 3))
			if c.Capped != (i >= 3) || c.DownCount != applied || c.NeedsRevision { // one rater cannot reach the threshold (5)
				t.Fatalf("vote %d: %s", i, r)
			}
			if i >= 3 && !strings.Contains(string(r.Body), `"capped":true`) {
				t.Errorf("vote %d: capped not in %s", i, r)
			}
		}
		got := e.memory(t, key, m.ID)
		if got.DownCount != 3 || got.NeedsRevision || got.Version != m.Version+3 {
			t.Errorf("after 50 votes of one rater: down %d needs_revision %v version %d", got.DownCount, got.NeedsRevision, got.Version)
		}
		if res, _ := e.feedback(t, key, map[string]any{"memory_id": m.ID, "thumb": "down", "rater": "other"}, http.StatusCreated); res.Credited[0].Capped ||
			res.Credited[0].DownCount != 4 {
			t.Errorf("another rater: %+v", res.Credited[0])
		}

		d := create(t, e.env, key, `{"content":"The user likes a lungo","category":"preference"}`)
		vote := func(k string, extra ...string) engram.CreditedMemory {
			t.Helper()
			body := map[string]any{"memory_id": d.ID, "thumb": "up"}
			for i := 0; i < len(extra); i += 2 {
				body[extra[i]] = extra[i+1]
			}
			res, _ := e.feedback(t, k, body, http.StatusCreated)
			return res.Credited[0]
		}
		for i := range 3 {
			if c := vote(key); c.Capped || c.UpCount != int64(i+1) {
				t.Errorf("key 1 vote %d: %+v", i, c)
			}
		}
		if c := vote(key); !c.Capped {
			t.Errorf("key 1's fourth vote without a rater: %+v, want capped", c)
		}
		if c := vote(key2); c.Capped || c.UpCount != 4 {
			t.Errorf("key 2's first vote: %+v, want applied", c)
		}
		// Raters are scoped by the API key: key 2 naming key 1's rater
		// neither spends nor shares key 1's allowance.
		if c := vote(key2, "rater", keyID+"/"); c.Capped || c.UpCount != 5 {
			t.Errorf("key 2 voting under key 1's rater name: %+v, want applied", c)
		}
	})
}

// TestFeedbackBadInput: every malformed interaction, feedback or export
// request is a 4xx with the one error shape, and writes nothing.
func TestFeedbackBadInput(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		beta, _ := e.tenant(t, "beta")
		type fixture struct {
			mem, rec, inter string
		}
		setup := func(key string) fixture {
			t.Helper()
			m := create(t, e.env, key, `{"content":"The user likes a flat white","category":"preference"}`)
			rec := postRecall(t, e.env, key, map[string]any{"query": "flat white", "token_budget": 500})
			in := e.interaction(t, key, map[string]any{"prompt": "Coffee?", "response": "A flat white.", "recall_id": rec.ID})
			// Two pairs, for cursors.
			for i := range 2 {
				turn := fmt.Sprint("t", i)
				x := e.interaction(t, key, map[string]any{"prompt": "Tea?", "response": "Green " + turn, "session_id": "s", "turn_id": turn})
				y := e.interaction(t, key, map[string]any{"prompt": "Tea?", "response": "Black " + turn, "session_id": "s", "turn_id": turn})
				e.feedback(t, key, map[string]any{"interaction_id": x.ID, "thumb": "down"}, http.StatusCreated)
				e.feedback(t, key, map[string]any{"interaction_id": y.ID, "thumb": "up"}, http.StatusCreated)
			}
			return fixture{mem: m.ID, rec: rec.ID, inter: in.ID}
		}
		a, b := setup(alpha), setup(beta)
		flushRecalls(t, e.env)
		counts := e.count(t)
		snapA, snapB := e.snapshot(t, alpha), e.snapshot(t, beta)
		nothingWritten := func(t *testing.T) {
			t.Helper()
			if got := e.count(t); fmt.Sprint(got) != fmt.Sprint(counts) {
				t.Errorf("rows changed:\nbefore %v\nafter  %v", counts, got)
			}
		}

		long := strings.Repeat("咖", 65537)
		type tc struct {
			name   string
			body   string
			status int
			code   string
			parts  []string
		}
		fbCases := []tc{
			{"rating 0", `{"interaction_id":"` + a.inter + `","rating":0}`, 400, engram.EINVALID, []string{"rating"}},
			{"rating 6", `{"interaction_id":"` + a.inter + `","rating":6}`, 400, engram.EINVALID, []string{"rating"}},
			{"rating -1", `{"interaction_id":"` + a.inter + `","rating":-1}`, 400, engram.EINVALID, []string{"rating"}},
			{"rating as a string", `{"interaction_id":"` + a.inter + `","rating":"5"}`, 400, engram.EINVALID, []string{"rating"}},
			{"rating 4.5", `{"interaction_id":"` + a.inter + `","rating":4.5}`, 400, engram.EINVALID, []string{"rating"}},
			{"thumb maybe", `{"interaction_id":"` + a.inter + `","thumb":"maybe"}`, 400, engram.EINVALID, []string{"thumb"}},
			{"thumb UP", `{"interaction_id":"` + a.inter + `","thumb":"UP"}`, 400, engram.EINVALID, []string{"thumb"}},
			{"thumb empty", `{"interaction_id":"` + a.inter + `","thumb":""}`, 400, engram.EINVALID, []string{"thumb"}},
			{"thumb and rating", `{"interaction_id":"` + a.inter + `","thumb":"up","rating":5}`, 400, engram.EINVALID, []string{"thumb", "rating"}},
			{"neither", `{"interaction_id":"` + a.inter + `"}`, 400, engram.EINVALID, []string{"thumb", "rating"}},
			{"neither, nulls", `{"interaction_id":"` + a.inter + `","thumb":null,"rating":null}`, 400, engram.EINVALID, []string{"thumb"}},
			{"two targets", `{"interaction_id":"` + a.inter + `","memory_id":"` + a.mem + `","thumb":"up"}`, 400, engram.EINVALID, []string{"exactly one"}},
			{"three targets", `{"interaction_id":"` + a.inter + `","recall_id":"` + a.rec + `","memory_id":"` + a.mem + `","thumb":"up"}`, 400, engram.EINVALID, []string{"exactly one"}},
			{"no target", `{"thumb":"up"}`, 400, engram.EINVALID, []string{"interaction_id"}},
			{"empty correction", `{"interaction_id":"` + a.inter + `","thumb":"down","correction":""}`, 400, engram.EINVALID, []string{"correction"}},
			{"correction on a recall", `{"recall_id":"` + a.rec + `","thumb":"down","correction":"Tea."}`, 400, engram.EINVALID, []string{"interaction_id"}},
			{"correction on a memory", `{"memory_id":"` + a.mem + `","thumb":"down","correction":"Tea."}`, 400, engram.EINVALID, []string{"interaction_id"}},
			{"correction too long", `{"interaction_id":"` + a.inter + `","thumb":"down","correction":"` + long + `"}`, 413, engram.ETOOLARGE, []string{"correction", "65536"}},
			{"reason too long", `{"interaction_id":"` + a.inter + `","thumb":"down","reason":"` + long + `"}`, 413, engram.ETOOLARGE, []string{"reason"}},
			{"rater too long", `{"memory_id":"` + a.mem + `","thumb":"down","rater":"` + strings.Repeat("r", 257) + `"}`, 400, engram.EINVALID, []string{"rater"}},
			{"idempotency key too long", `{"memory_id":"` + a.mem + `","thumb":"down","idempotency_key":"` + strings.Repeat("k", 257) + `"}`, 400, engram.EINVALID, []string{"idempotency_key"}},
			{"unknown field", `{"interaction_id":"` + a.inter + `","thumb":"up","score":1}`, 400, engram.EINVALID, []string{"score"}},
			{"not an object", `["up"]`, 400, engram.EINVALID, nil},
		}
		for _, c := range fbCases {
			t.Run("feedback/"+c.name, func(t *testing.T) {
				wantError(t, e.do(t, "POST", "/v1/feedback", alpha, c.body), c.status, c.code, c.parts...)
				nothingWritten(t)
			})
		}

		// Unknown ids and another tenant's ids: the same 404.
		for _, target := range []struct{ field, unknown, betas string }{
			{"interaction_id", "int_unknown00000000000000", b.inter},
			{"recall_id", "rec_unknown00000000000000", b.rec},
			{"memory_id", "mem_unknown00000000000000", b.mem},
		} {
			t.Run("feedback/unknown "+target.field, func(t *testing.T) {
				want := e.do(t, "POST", "/v1/feedback", alpha, `{"`+target.field+`":"`+target.unknown+`","thumb":"down"}`)
				wantError(t, want, http.StatusNotFound, engram.ENOTFOUND)
				got := e.do(t, "POST", "/v1/feedback", alpha, `{"`+target.field+`":"`+target.betas+`","thumb":"down"}`)
				wantError(t, got, http.StatusNotFound, engram.ENOTFOUND)
				if strings.ReplaceAll(string(got.Body), target.betas, "ID") != strings.ReplaceAll(string(want.Body), target.unknown, "ID") {
					t.Errorf("beta's %s: %s; an unknown id: %s", target.field, got, want)
				}
				nothingWritten(t)
			})
		}

		msg := func(role, content string) map[string]string {
			return map[string]string{"role": role, "content": content}
		}
		okMsgs := []map[string]string{msg("user", "Hi")}
		inCases := []tc{
			{"prompt too long", mustJSON(map[string]any{"prompt": long, "response": "ok"}), 413, engram.ETOOLARGE, []string{"prompt", "65536"}},
			{"messages render too long", mustJSON(map[string]any{"prompt": []map[string]string{msg("user", long[:3*65531])}, "response": "ok"}),
				413, engram.ETOOLARGE, []string{"prompt"}},
			{"response too long", mustJSON(map[string]any{"prompt": "Coffee?", "response": long}), 413, engram.ETOOLARGE, []string{"response"}},
			{"empty response", `{"prompt":"Coffee?","response":""}`, 400, engram.EINVALID, []string{"response"}},
			{"blank response", `{"prompt":"Coffee?","response":" \n\t"}`, 400, engram.EINVALID, []string{"response"}},
			{"no response", `{"prompt":"Coffee?"}`, 400, engram.EINVALID, []string{"response"}},
			{"no prompt", `{"response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"null prompt", `{"prompt":null,"response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"empty prompt", `{"prompt":"","response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"blank prompt", `{"prompt":"   ","response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"prompt a number", `{"prompt":42,"response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"prompt an object", `{"prompt":{"role":"user","content":"Hi"},"response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"prompt true", `{"prompt":true,"response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"prompt an empty list", `{"prompt":[],"response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"prompt a list of strings", `{"prompt":["Hi"],"response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"message with an unknown role", mustJSON(map[string]any{"prompt": []map[string]string{msg("user", "Hi"), msg("robot", "Hello")}, "response": "ok"}),
				400, engram.EINVALID, []string{"prompt[1].role"}},
			{"message without a role", `{"prompt":[{"content":"Hi"}],"response":"ok"}`, 400, engram.EINVALID, []string{"role"}},
			{"message with empty content", mustJSON(map[string]any{"prompt": []map[string]string{msg("system", "Be brief."), msg("user", "")}, "response": "ok"}),
				400, engram.EINVALID, []string{"prompt[1].content"}},
			{"message with blank content", mustJSON(map[string]any{"prompt": []map[string]string{msg("user", " \n ")}, "response": "ok"}),
				400, engram.EINVALID, []string{"content"}},
			{"message with an unknown field", `{"prompt":[{"role":"user","content":"Hi","lang":"en"}],"response":"ok"}`, 400, engram.EINVALID, []string{"prompt"}},
			{"unknown recall", mustJSON(map[string]any{"prompt": okMsgs, "response": "ok", "recall_id": "rec_unknown00000000000000"}), 404, engram.ENOTFOUND, []string{"recall"}},
			{"unknown field", `{"prompt":"Coffee?","response":"ok","answer":"x"}`, 400, engram.EINVALID, []string{"answer"}},
			{"session id too long", mustJSON(map[string]any{"prompt": "Coffee?", "response": "ok", "session_id": strings.Repeat("s", 257)}), 400, engram.EINVALID, []string{"session_id"}},
			{"turn id too long", mustJSON(map[string]any{"prompt": "Coffee?", "response": "ok", "turn_id": strings.Repeat("t", 257)}), 400, engram.EINVALID, []string{"turn_id"}},
		}
		for _, c := range inCases {
			t.Run("interaction/"+c.name, func(t *testing.T) {
				wantError(t, e.do(t, "POST", "/v1/interactions", alpha, c.body), c.status, c.code, c.parts...)
				nothingWritten(t)
			})
		}
		t.Run("interaction/another tenant's recall", func(t *testing.T) {
			want := e.do(t, "POST", "/v1/interactions", alpha, `{"prompt":"Coffee?","response":"ok","recall_id":"rec_unknown00000000000000"}`)
			got := e.do(t, "POST", "/v1/interactions", alpha, `{"prompt":"Coffee?","response":"ok","recall_id":"`+b.rec+`"}`)
			wantError(t, got, http.StatusNotFound, engram.ENOTFOUND)
			if strings.ReplaceAll(string(got.Body), b.rec, "ID") != strings.ReplaceAll(string(want.Body), "rec_unknown00000000000000", "ID") {
				t.Errorf("beta's recall: %s; an unknown recall: %s", got, want)
			}
			nothingWritten(t)
		})

		// Export requests.
		first := e.export(t, alpha, "format=trl&limit=1")
		unpairedCur := e.export(t, alpha, "format=trl-unpaired&limit=1").next
		betaCur := e.export(t, beta, "format=trl&limit=1").next
		if first.next == "" || unpairedCur == "" || betaCur == "" {
			t.Fatalf("cursors %q %q %q", first.next, unpairedCur, betaCur)
		}
		q := func(kv ...string) string {
			v := url.Values{}
			for i := 0; i < len(kv); i += 2 {
				v.Add(kv[i], kv[i+1])
			}
			return v.Encode()
		}
		for _, c := range []struct {
			name, query string
			parts       []string
		}{
			{"no format", "", []string{"format"}},
			{"empty format", q("format", ""), []string{"format"}},
			{"unknown format", q("format", "csv"), []string{"csv", "trl", "trl-conversational", "trl-unpaired", "openai"}},
			{"format in capitals", q("format", "TRL"), []string{"TRL"}},
			{"format twice", q("format", "trl", "format", "openai"), []string{"format"}},
			{"malformed cursor", q("format", "trl", "cursor", "abc"), []string{"cursor"}},
			{"another tenant's cursor", q("format", "trl", "cursor", betaCur), []string{"cursor"}},
			{"cursor with another min_margin", q("format", "trl", "cursor", first.next, "min_margin", "1"), []string{"cursor"}},
			{"cursor with a category", q("format", "trl", "cursor", first.next, "category", "work"), []string{"cursor"}},
			{"cursor with since", q("format", "trl", "cursor", first.next, "since", "2020-01-01T00:00:00Z"), []string{"cursor"}},
			{"unpaired cursor for pairs", q("format", "openai", "cursor", unpairedCur), []string{"cursor"}},
			{"pairs cursor for unpaired", q("format", "trl-unpaired", "cursor", first.next), []string{"cursor"}},
			{"since not RFC 3339", q("format", "trl", "since", "yesterday"), []string{"since", "RFC 3339"}},
			{"since a date", q("format", "trl", "since", "2026-01-01"), []string{"since"}},
			{"until not RFC 3339", q("format", "trl", "until", "1700000000"), []string{"until"}},
			{"min_margin -1", q("format", "trl", "min_margin", "-1"), []string{"min_margin"}},
			{"min_margin 3", q("format", "trl", "min_margin", "3"), []string{"min_margin"}},
			{"min_margin not a number", q("format", "trl", "min_margin", "high"), []string{"min_margin"}},
			{"min_margin Inf", q("format", "trl", "min_margin", "Inf"), []string{"min_margin"}},
			{"min_margin NaN", q("format", "trl", "min_margin", "NaN"), []string{"min_margin"}},
			{"limit 0", q("format", "trl", "limit", "0"), []string{"limit"}},
			{"limit -1", q("format", "trl", "limit", "-1"), []string{"limit"}},
			{"limit not an integer", q("format", "trl", "limit", "1.5"), []string{"limit"}},
			{"unknown parameter", q("format", "trl", "tenant", "beta"), []string{"tenant"}},
		} {
			t.Run("pairs/"+c.name, func(t *testing.T) {
				x := e.export(t, alpha, c.query)
				wantError(t, x.r, http.StatusBadRequest, engram.EINVALID, c.parts...)
			})
		}

		sameSnapshot(t, "alpha's memories", snapA, e.snapshot(t, alpha))
		sameSnapshot(t, "beta's memories", snapB, e.snapshot(t, beta))
		nothingWritten(t)

		// At the limits: accepted.
		e.interaction(t, alpha, map[string]any{"prompt": long[:3*65536], "response": long[:3*65536]})
		in := e.interaction(t, alpha, map[string]any{"prompt": []map[string]string{msg("developer", "Be brief."), msg("tool", "{}"), msg("user", "Hi")}, "response": "ok"})
		e.feedback(t, alpha, map[string]any{"interaction_id": in.ID, "thumb": "down", "correction": long[:3*65536], "reason": long[:3*65536],
			"rater": strings.Repeat("r", 256), "idempotency_key": strings.Repeat("k", 256)}, http.StatusCreated)
	})
}

// TestFeedbackExportPaging: 25 pairs come out 10 at a time with the
// cursor in the Engram-Next-Cursor trailer, in order, once each, the last
// page's trailer empty; since/until, category and min_margin filter, and
// filtered exports page too.
func TestFeedbackExportPaging(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		for _, body := range []string{
			`{"content":"The user likes a flat white with oat milk","category":"preference"}`,
			`{"content":"我喜欢喝燕麦拿铁咖啡","category":"preference"}`,
			`{"content":"The deploy pipeline runs on Fridays after the code review","category":"work"}`,
			`{"content":"项目周报每周一提交给经理","category":"work"}`,
		} {
			create(t, e.env, key, body)
		}
		recA := postRecall(t, e.env, key, map[string]any{"query": "what coffee do I like? 咖啡", "token_budget": 500})
		recB := postRecall(t, e.env, key, map[string]any{"query": "when does the deploy pipeline run? 周报", "token_budget": 500})
		catA, catB := recA.Route.Domains[0].Name, recB.Route.Domains[0].Name
		if catA == catB {
			t.Fatalf("both recalls routed to %q; the test needs two categories", catA)
		}

		t0 := time.Now().UTC().Truncate(time.Hour).Add(-4 * time.Hour)
		type made struct {
			line     string
			at       time.Time
			category string
			margin   float64
		}
		var all []made
		trlLine := func(prompt, chosen, rejected string) string {
			return mustJSON(struct {
				Prompt   string `json:"prompt"`
				Chosen   string `json:"chosen"`
				Rejected string `json:"rejected"`
			}{prompt, chosen, rejected})
		}
		for i := range 25 {
			at := t0.Add(time.Duration(i/10) * time.Hour)
			e.clock.set(at)
			rec, cat := recA, catA
			if i%2 == 1 {
				rec, cat = recB, catB
			}
			prompt, turn := fmt.Sprint("Question ", i), fmt.Sprint("turn-", i)
			bad := e.interaction(t, key, map[string]any{"prompt": prompt, "response": fmt.Sprint("bad ", i), "recall_id": rec.ID, "session_id": "s", "turn_id": turn})
			good := e.interaction(t, key, map[string]any{"prompt": prompt, "response": fmt.Sprint("good ", i), "recall_id": rec.ID, "session_id": "s", "turn_id": turn})
			margin := 2.0
			switch i % 5 {
			case 0:
				e.feedback(t, key, map[string]any{"interaction_id": bad.ID, "rating": 3}, http.StatusCreated)
				margin = 1
			case 1:
				e.feedback(t, key, map[string]any{"interaction_id": bad.ID, "rating": 2}, http.StatusCreated)
				margin = 1.5
			default:
				e.feedback(t, key, map[string]any{"interaction_id": bad.ID, "thumb": "down"}, http.StatusCreated)
			}
			upOrFive := map[string]any{"interaction_id": good.ID, "thumb": "up"}
			if i%5 == 0 {
				upOrFive = map[string]any{"interaction_id": good.ID, "rating": 5}
			}
			if res, _ := e.feedback(t, key, upOrFive, http.StatusCreated); len(res.Pairs) != 1 {
				t.Fatalf("pair %d not made: %v", i, res.Pairs)
			}
			all = append(all, made{trlLine(prompt, fmt.Sprint("good ", i), fmt.Sprint("bad ", i)), at, cat, margin})
		}
		e.clock.set(time.Time{})
		lines := func(keep func(made) bool) []string {
			var out []string
			for _, m := range all {
				if keep(m) {
					out = append(out, m.line)
				}
			}
			return out
		}

		// Paging through everything, 10 at a time.
		var got []string
		cursor := ""
		for page := 0; ; page++ {
			query := "format=trl&limit=10"
			if cursor != "" {
				query += "&cursor=" + url.QueryEscape(cursor)
			}
			x := e.export(t, key, query)
			wantStatus(t, x.r, http.StatusOK)
			if !x.declared {
				t.Errorf("page %d: the Engram-Next-Cursor trailer is not declared (trailers %v)", page, x.r.Header)
			}
			wantN := []int{10, 10, 5}[min(page, 2)]
			if len(x.lines) != wantN || (page < 2) != (x.next != "") {
				t.Errorf("page %d: %d lines, next cursor %q; want %d lines and a cursor only before the last page", page, len(x.lines), x.next, wantN)
			}
			got = append(got, x.lines...)
			if x.next == "" || page > 5 {
				break
			}
			cursor = x.next
		}
		if want := lines(func(made) bool { return true }); !slices.Equal(got, want) {
			t.Errorf("paged export:\n got %q\nwant %q", got, want)
		}
		// An exact multiple of the limit: the last full page ends the export.
		pages := 0
		for cursor = ""; ; pages++ {
			query := "format=openai&limit=5"
			if cursor != "" {
				query += "&cursor=" + url.QueryEscape(cursor)
			}
			x := e.export(t, key, query)
			if len(x.lines) != 5 {
				t.Errorf("limit 5, page %d: %d lines", pages, len(x.lines))
			}
			if x.next == "" || pages > 6 {
				break
			}
			cursor = x.next
		}
		if pages != 4 {
			t.Errorf("25 pairs 5 at a time took %d pages, want 5", pages+1)
		}

		// Unpaired: every judged answer but the 3-star ones, 45 lines.
		var unpaired []string
		for cursor = ""; ; {
			query := "format=trl-unpaired&limit=20"
			if cursor != "" {
				query += "&cursor=" + url.QueryEscape(cursor)
			}
			x := e.export(t, key, query)
			unpaired = append(unpaired, x.lines...)
			if x.next == "" || len(unpaired) > 100 {
				break
			}
			cursor = x.next
		}
		if len(unpaired) != 45 || unpaired[0] != `{"prompt":"Question 0","completion":"good 0","label":true}` ||
			unpaired[1] != `{"prompt":"Question 1","completion":"bad 1","label":false}` {
			t.Errorf("unpaired: %d lines, first %q", len(unpaired), unpaired[:min(2, len(unpaired))])
		}

		hour := func(h int) string { return t0.Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
		shanghai := t0.Add(time.Hour).In(time.FixedZone("CST", 8*3600)).Format(time.RFC3339)
		for _, tc := range []struct {
			name  string
			query string
			keep  func(made) bool
		}{
			{"since", "since=" + url.QueryEscape(hour(1)), func(m made) bool { return !m.at.Before(t0.Add(time.Hour)) }},
			{"since with an offset", "since=" + url.QueryEscape(shanghai), func(m made) bool { return !m.at.Before(t0.Add(time.Hour)) }},
			{"until", "until=" + url.QueryEscape(hour(1)), func(m made) bool { return m.at.Before(t0.Add(time.Hour)) }},
			{"since and until", "since=" + url.QueryEscape(hour(1)) + "&until=" + url.QueryEscape(hour(2)),
				func(m made) bool { return m.at.Equal(t0.Add(time.Hour)) }},
			{"category A", "category=" + url.QueryEscape(catA), func(m made) bool { return m.category == catA }},
			{"category B", "category=" + url.QueryEscape(catB), func(m made) bool { return m.category == catB }},
			{"unknown category", "category=nothing", func(made) bool { return false }},
			{"min_margin 0", "min_margin=0", func(made) bool { return true }},
			{"min_margin 1.5", "min_margin=1.5", func(m made) bool { return m.margin >= 1.5 }},
			{"min_margin 2", "min_margin=2", func(m made) bool { return m.margin >= 2 }},
			{"everything", "since=" + url.QueryEscape(hour(1)) + "&category=" + url.QueryEscape(catB) + "&min_margin=1.5",
				func(m made) bool { return !m.at.Before(t0.Add(time.Hour)) && m.category == catB && m.margin >= 1.5 }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				want := lines(tc.keep)
				x := e.export(t, key, "format=trl&"+tc.query)
				wantStatus(t, x.r, http.StatusOK)
				if !slices.Equal(x.lines, want) || x.next != "" {
					t.Errorf("next %q\n got %q\nwant %q", x.next, x.lines, want)
				}
				var paged []string
				for cursor := ""; ; {
					query := "format=trl&limit=3&" + tc.query
					if cursor != "" {
						query += "&cursor=" + url.QueryEscape(cursor)
					}
					x := e.export(t, key, query)
					wantStatus(t, x.r, http.StatusOK)
					paged = append(paged, x.lines...)
					if x.next == "" || len(paged) > len(all) {
						break
					}
					cursor = x.next
				}
				if !slices.Equal(paged, want) {
					t.Errorf("paged 3 at a time:\n got %q\nwant %q", paged, want)
				}
			})
		}
	})
}

// TestDecayClock: a memory's age for decay runs from its last
// reinforcement — creation, a content edit, positive feedback — and never
// from being recalled, voted down or re-labelled.
func TestDecayClock(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "acme")
		t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
		e.clock.set(t0)
		m := create(t, e.env, key, `{"content":"The staging database password rotates every Monday","category":"work","priority":"P3"}`)
		if got := getMemory(t, e.env, key, m.ID); !got.ReinforcedAt.Equal(t0) {
			t.Fatalf("created: reinforced_at %v, want %v", got.ReinforcedAt, t0)
		}
		age := func(at time.Time) float64 {
			t.Helper()
			e.clock.set(at)
			rec := postRecall(t, e.env, key, map[string]any{"query": "when does the staging database password rotate", "token_budget": 200})
			for _, it := range rec.Items {
				if it.ID == m.ID {
					return it.Breakdown.AgeDays
				}
			}
			t.Fatalf("memory not recalled: %+v", rec.Items)
			return 0
		}
		// Recalled daily for a week, voted down, re-labelled: still aging from t0.
		var recallID string
		for d := 1; d <= 7; d++ {
			if got := age(t0.AddDate(0, 0, d)); math.Abs(got-float64(d)) > 1e-6 {
				t.Fatalf("day %d: age %v days, want %d: being read must not reset the clock", d, got, d)
			}
		}
		rec := postRecall(t, e.env, key, map[string]any{"query": "staging database password", "token_budget": 200})
		recallID = rec.ID
		wantStatus(t, e.do(t, "POST", "/v1/feedback", key, `{"recall_id":"`+recallID+`","thumb":"down","rater":"r1"}`), http.StatusCreated)
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+m.ID, key, `{"tags":["ops"],"importance":0.9}`), http.StatusOK)
		flushRecalls(t, e.env)
		if got := getMemory(t, e.env, key, m.ID); !got.ReinforcedAt.Equal(t0) || got.AccessCount == 0 || got.DownCount != 1 {
			t.Fatalf("after reads, a down vote and a re-label: reinforced_at %v (want %v), access %d, down %d",
				got.ReinforcedAt, t0, got.AccessCount, got.DownCount)
		}
		if got := age(t0.AddDate(0, 0, 10)); math.Abs(got-10) > 1e-6 {
			t.Fatalf("age %v days after a down vote, want 10", got)
		}
		// A thumb up restarts it.
		t1 := t0.AddDate(0, 0, 10)
		rec = postRecall(t, e.env, key, map[string]any{"query": "staging database password", "token_budget": 200})
		wantStatus(t, e.do(t, "POST", "/v1/feedback", key, `{"recall_id":"`+rec.ID+`","thumb":"up","rater":"r2"}`), http.StatusCreated)
		if got := getMemory(t, e.env, key, m.ID); !got.ReinforcedAt.Equal(t1) {
			t.Fatalf("after a thumb up: reinforced_at %v, want %v", got.ReinforcedAt, t1)
		}
		// So does a content edit, and a rollback to other content.
		t2 := t0.AddDate(0, 0, 20)
		e.clock.set(t2)
		r := e.do(t, "PATCH", "/v1/memories/"+m.ID, key, `{"content":"The staging database password rotates every Tuesday"}`)
		wantStatus(t, r, http.StatusOK)
		if got := getMemory(t, e.env, key, m.ID); !got.ReinforcedAt.Equal(t2) {
			t.Fatalf("after a content edit: reinforced_at %v, want %v", got.ReinforcedAt, t2)
		}
		t3 := t0.AddDate(0, 0, 30)
		e.clock.set(t3)
		wantStatus(t, e.do(t, "POST", "/v1/memories/"+m.ID+"/rollback", key, `{"version":1}`), http.StatusOK)
		if got := getMemory(t, e.env, key, m.ID); !got.ReinforcedAt.Equal(t3) || !strings.Contains(got.Content, "Monday") {
			t.Fatalf("after a rollback to other content: reinforced_at %v (want %v), content %q", got.ReinforcedAt, t3, got.Content)
		}
	})
}
