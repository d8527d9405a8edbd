package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
	"github.com/engram-memory/engram/working"
)

// sessionEnv is a server with the whole stack cmd/engram wires, the
// working memory included, and the working service itself.
type sessionEnv struct {
	*env
	w *working.Service
}

func newSessionEnv(t testing.TB, engine string, adjust ...func(*configs.Config)) *sessionEnv {
	t.Helper()
	return newSessionEnvOn(t, storetest.Open(t, engine), adjust...)
}

func newSessionEnvOn(t testing.TB, db *store.DB, adjust ...func(*configs.Config)) *sessionEnv {
	t.Helper()
	cfg := configs.Default()
	for _, a := range adjust {
		a(&cfg)
	}
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	routes := router.NewService(router.New(rcfg), db, 0)
	scoring := learning.NewScoreConfig(cfg.Scoring)
	scorer := learning.NewScorer(scoring, time.Now)
	tok := storetest.Tokenizer(t)
	rec := learning.NewRecaller(indextest.Wrap(db), routes, scorer, tok, cfg.Recall, time.Now)
	w := working.New(db, db, routes, rec, tok, working.Config{Sessions: cfg.Sessions, Limits: cfg.Limits,
		Categories: cfg.Memory.Categories, MaxBudget: cfg.Recall.MaxBudget}, time.Now, nil)
	lim := cfg.Limits
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Router: routes, Recall: rec, Feedback: learning.NewFeedback(db, scorer, cfg.Feedback),
		Sessions: w, Personas: w, Prompt: w, Quotas: db,
		Limits: server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits(),
			MaxBudget: cfg.Recall.MaxBudget},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &sessionEnv{env: &env{db: db, h: s, srv: srv}, w: w}
}

type eventsAnswer struct {
	Session engram.Session        `json:"session"`
	Events  []engram.SessionEvent `json:"events"`
}

func postEvents(t testing.TB, e *sessionEnv, key, id, body string) eventsAnswer {
	t.Helper()
	r := e.do(t, "POST", "/v1/sessions/"+id+"/events", key, body)
	wantStatus(t, r, http.StatusCreated)
	var a eventsAnswer
	mustDecode(t, r, &a)
	return a
}

func episode(t testing.TB, e *sessionEnv, key, id string) engram.Memory {
	t.Helper()
	r := e.do(t, "GET", "/v1/memories/"+id, key, "")
	wantStatus(t, r, http.StatusOK)
	var m engram.Memory
	mustDecode(t, r, &m)
	return m
}

// TestSessionMessagesRemembered: each message becomes an L2 episode at
// once, with the speaker as a tag, the previous message (also across
// posts) as its context, occurred_at from "at", and provenance naming the
// session and the message id; recall shows the episode's date.
// TestBootDefaultWithinMaxBudget: a boot that names no token_limit is
// rendered within engram.DefaultBudget, so it holds when recall.max_budget
// is below the default.
func TestBootDefaultWithinMaxBudget(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine, func(c *configs.Config) { c.Recall.MaxBudget = 500 })
		key, _ := e.tenant(t, "alpha")
		r := e.do(t, "GET", "/v1/boot?agent_id=a1", key, "")
		wantStatus(t, r, http.StatusOK)
	})
}

func TestSessionMessagesRemembered(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		a := postEvents(t, e, key, "conv-1", `{"resource_id":"user:ada","events":[
			{"type":"message","speaker":"Caroline","content":"I went to the LGBTQ support group yesterday","at":"2023-05-08T13:56:00Z","message_id":"D1:3"},
			{"type":"message","role":"assistant","content":"How did the support group feel?"},
			{"type":"tool_call","name":"calendar","args":{"day":"2023-05-07"},"result":{"events":1}}]}`)
		if len(a.Events) != 3 || a.Events[0].Seq != 1 || a.Events[2].Seq != 3 || a.Session.ResourceID != "user:ada" || a.Session.Status != "open" {
			t.Fatalf("answer: %+v", a)
		}
		if a.Events[0].MemoryID == "" || a.Events[1].MemoryID == "" || a.Events[2].MemoryID != "" {
			t.Fatalf("episode ids: %+v", a.Events)
		}
		m := episode(t, e, key, a.Events[0].MemoryID)
		if m.Type != "episode" || m.Content != "Caroline: I went to the LGBTQ support group yesterday" || m.Context != "assistant: How did the support group feel?" ||
			len(m.Tags) != 1 || m.Tags[0] != "Caroline" || m.OccurredAt == nil || !m.OccurredAt.Equal(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)) {
			t.Errorf("first episode: %+v", m)
		}
		var src map[string]string
		if err := json.Unmarshal(m.Source, &src); err != nil || src["kind"] != "session" || src["name"] != "conv-1" || src["locator"] != "D1:3" {
			t.Errorf("first episode source: %s", m.Source)
		}
		m2 := episode(t, e, key, a.Events[1].MemoryID)
		if m2.Context != m.Content || m2.OccurredAt == nil || time.Since(*m2.OccurredAt) > time.Minute {
			t.Errorf("second episode (previous message as context, received time): %+v", m2)
		}
		// A later post: its first message's context is the last message
		// before it, and that message's episode takes it as its reply.
		b := postEvents(t, e, key, "conv-1", `{"type":"message","speaker":"Melanie","content":"That sounds empowering, Caroline"}`)
		if m3 := episode(t, e, key, b.Events[0].MemoryID); m3.Context != m2.Content {
			t.Errorf("context across posts: %q, want %q", m3.Context, m2.Content)
		}
		// Version 2 is the reply, 3 the link to the next message's episode
		// (answered_by, see docs/links.md).
		if m2 := episode(t, e, key, a.Events[1].MemoryID); m2.Context != m.Content+"\nMelanie: That sounds empowering, Caroline" || m2.Version != 3 {
			t.Errorf("the reply in the previous episode's context: %q v%d", m2.Context, m2.Version)
		}
		// A repeated text is one memory (the write guard), and the reply
		// to the repeat does not change the first one's context.
		c := postEvents(t, e, key, "conv-1", `{"events":[{"type":"message","role":"assistant","content":"How did the support group feel?"}]}`)
		if c.Events[0].MemoryID != a.Events[1].MemoryID {
			t.Errorf("a repeated message made a new memory")
		}
		postEvents(t, e, key, "conv-1", `{"type":"message","speaker":"Caroline","content":"Great, really"}`)
		if m2 := episode(t, e, key, a.Events[1].MemoryID); m2.Version != 3 {
			t.Errorf("a shared episode took another reply: %q v%d", m2.Context, m2.Version)
		}
		rec := postRecall(t, e.env, key, map[string]any{"query": "When did Caroline go to the LGBTQ support group?", "token_budget": 300})
		if !strings.Contains(rec.Context, "- [2023-05-08] Caroline: I went to the LGBTQ support group yesterday") {
			t.Errorf("recall does not show the episode's date:\n%s", rec.Context)
		}
		zh := postEvents(t, e, key, "chat-zh", `{"type":"message","speaker":"小李","content":"我每天早上都喝黑咖啡","at":"2024-01-02T08:00:00+08:00"}`)
		if m := episode(t, e, key, zh.Events[0].MemoryID); len(m.Tags) != 1 || m.Tags[0] != "小李" {
			t.Errorf("Chinese speaker tag: %+v", m)
		}
		if rec := postRecall(t, e.env, key, map[string]any{"query": "小李喝什么咖啡？", "token_budget": 200}); !strings.Contains(rec.Context, "- [2024-01-02] 小李: 我每天早上都喝黑咖啡") {
			t.Errorf("Chinese episode not recalled with its date:\n%s", rec.Context)
		}
		r := e.do(t, "GET", "/v1/sessions/conv-1/events", key, "")
		wantStatus(t, r, http.StatusOK)
		var all eventsAnswer
		mustDecode(t, r, &all)
		if len(all.Events) != 6 || all.Events[2].Type != "tool_call" || string(all.Events[2].Args) != `{"day":"2023-05-07"}` || all.Session.Events != 6 ||
			all.Events[0].MemoryID != a.Events[0].MemoryID || all.Events[2].MemoryID != "" {
			t.Errorf("events read back: %s", r)
		}
	})
}

// TestSessionMessagesNotRemembered: with sessions.remember_messages off,
// messages stay L1 only.
func TestSessionMessagesNotRemembered(t *testing.T) {
	e := newSessionEnv(t, "sqlite", func(c *configs.Config) { c.Sessions.RememberMessages = false })
	key, _ := e.tenant(t, "alpha")
	a := postEvents(t, e, key, "s", `{"type":"message","role":"user","content":"hello there"}`)
	if a.Events[0].MemoryID != "" {
		t.Errorf("episode written with remember_messages off: %+v", a.Events[0])
	}
	if p := e.do(t, "GET", "/v1/memories", key, "").page(t); len(p.Items) != 0 {
		t.Errorf("memories: %d", len(p.Items))
	}
}

// TestSessionBadInput: every refusal is a 4xx that writes nothing.
func TestSessionBadInput(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine, func(c *configs.Config) { c.Sessions.MaxPersonaBytes = 100 })
		key, _ := e.tenant(t, "alpha")
		postEvents(t, e, key, "s1", `{"resource_id":"r1","type":"message","role":"user","content":"first"}`)
		before := e.snapshot(t, key)
		long := strings.Repeat("a", 129)
		msg := `{"type":"message","role":"user","content":"x"}`
		for _, tc := range []struct {
			name, method, path, body string
			status                   int
			code                     string
			parts                    []string
		}{
			{"slash", "POST", "/v1/sessions/a%2Fb/events", msg, 400, engram.EINVALID, []string{"session id"}},
			{"dotdot", "POST", "/v1/sessions/../events", msg, 400, engram.EINVALID, []string{"session id"}},
			{"dotdot inside", "POST", "/v1/sessions/a..b/events", msg, 400, engram.EINVALID, []string{"session id"}},
			{"nul", "POST", "/v1/sessions/a%00b/events", msg, 400, engram.EINVALID, []string{"session id"}},
			{"too long", "POST", "/v1/sessions/" + long + "/events", msg, 400, engram.EINVALID, []string{"128"}},
			{"space", "GET", "/v1/sessions/a%20b/context?token_limit=10", "", 400, engram.EINVALID, []string{"session id"}},
			{"unknown type", "POST", "/v1/sessions/s1/events", `{"type":"thought","content":"x"}`, 400, engram.EINVALID, []string{"unknown event type", "thought"}},
			{"no type", "POST", "/v1/sessions/s1/events", `{"content":"x"}`, 400, engram.EINVALID, []string{"type is required"}},
			{"unknown type in batch", "POST", "/v1/sessions/s1/events", `{"events":[` + msg + `,{"type":"nope"}]}`, 400, engram.EINVALID, []string{"events[1]", "nope"}},
			{"unknown field", "POST", "/v1/sessions/s1/events", `{"type":"message","role":"user","content":"x","mood":"ok"}`, 400, engram.EINVALID, []string{"mood"}},
			{"message without speaker", "POST", "/v1/sessions/s1/events", `{"type":"message","content":"x"}`, 400, engram.EINVALID, []string{"speaker or role"}},
			{"message without content", "POST", "/v1/sessions/s1/events", `{"type":"message","role":"user"}`, 400, engram.EINVALID, []string{"content"}},
			{"speaker with a newline", "POST", "/v1/sessions/s1/events", `{"type":"message","speaker":"A\nB","content":"x"}`, 400, engram.EINVALID, []string{"speaker"}},
			{"blank speaker", "POST", "/v1/sessions/s1/events", `{"type":"message","speaker":"  ","content":"x"}`, 400, engram.EINVALID, []string{"speaker or role"}},
			{"tool without name", "POST", "/v1/sessions/s1/events", `{"type":"tool_call","args":{}}`, 400, engram.EINVALID, []string{"name"}},
			{"bad at", "POST", "/v1/sessions/s1/events", `{"type":"message","role":"user","content":"x","at":"yesterday"}`, 400, engram.EINVALID, []string{"at"}},
			{"at on a decision", "POST", "/v1/sessions/s1/events", `{"type":"decision","content":"x","at":"2023-01-01T00:00:00Z"}`, 400, engram.EINVALID, []string{"message events"}},
			{"event and batch", "POST", "/v1/sessions/s1/events", `{"type":"message","events":[]}`, 400, engram.EINVALID, []string{"not both"}},
			{"empty batch", "POST", "/v1/sessions/s1/events", `{"events":[]}`, 400, engram.EINVALID, []string{"at least one"}},
			{"other resource", "POST", "/v1/sessions/s1/events", `{"resource_id":"r2","type":"message","role":"user","content":"x"}`, 409, engram.ECONFLICT, []string{"r1"}},
			{"bad resource id", "POST", "/v1/sessions/s2/events", `{"resource_id":"a/b","type":"message","role":"user","content":"x"}`, 400, engram.EINVALID, []string{"resource_id"}},
			{"unknown action", "POST", "/v1/sessions/s1/explode", `{}`, 404, engram.ENOTFOUND, nil},
			{"wrong method", "DELETE", "/v1/sessions/s1/events", "", 405, "method_not_allowed", nil},
			{"context without limit", "GET", "/v1/sessions/s1/context", "", 400, engram.EINVALID, []string{"token_limit"}},
			{"context over max", "GET", "/v1/sessions/s1/context?token_limit=8001", "", 400, engram.EINVALID, []string{"token_limit"}},
			{"context of unknown", "GET", "/v1/sessions/nope/context?token_limit=100", "", 404, engram.ENOTFOUND, nil},
			{"state not object", "PUT", "/v1/sessions/s1/state", `{"state":[1]}`, 400, engram.EINVALID, []string{"object"}},
			{"state missing", "PUT", "/v1/sessions/s1/state", `{"schema":{}}`, 400, engram.EINVALID, []string{"state"}},
			{"bad schema", "PUT", "/v1/sessions/s1/state", `{"state":{},"schema":{"type":"nope"}}`, 400, engram.EINVALID, []string{"schema"}},
			{"schema loads a file", "PUT", "/v1/sessions/s1/state", `{"state":{},"schema":{"$ref":"file:///etc/passwd"}}`, 400, engram.EINVALID, []string{"schema"}},
			{"bad scope", "GET", "/v1/sessions/s1/state?scope=global", "", 400, engram.EINVALID, []string{"scope"}},
			{"patch not object", "PATCH", "/v1/sessions/s1/state", `[1]`, 400, engram.EINVALID, []string{"object"}},
			{"end without outcome", "POST", "/v1/sessions/s1/end", `{}`, 400, engram.EINVALID, []string{"outcome"}},
			{"end bad outcome", "POST", "/v1/sessions/s1/end", `{"outcome":"meh"}`, 400, engram.EINVALID, []string{"outcome"}},
			{"end unknown", "POST", "/v1/sessions/nope/end", `{"outcome":"success"}`, 404, engram.ENOTFOUND, nil},
			{"persona too large", "PUT", "/v1/agents/bot/persona", `{"markdown":"` + strings.Repeat("x", 101) + `"}`, 413, engram.ETOOLARGE, []string{"100"}},
			{"persona empty", "PUT", "/v1/agents/bot/persona", `{"markdown":"  "}`, 400, engram.EINVALID, []string{"persona"}},
			{"persona bad agent", "PUT", "/v1/agents/a..b/persona", `{"markdown":"x"}`, 400, engram.EINVALID, []string{"agent id"}},
			{"persona unknown", "GET", "/v1/agents/bot/persona", "", 404, engram.ENOTFOUND, nil},
			{"prompt without query", "POST", "/v1/prompt", `{"token_budget":100}`, 400, engram.EINVALID, []string{"query"}},
			{"prompt budget", "POST", "/v1/prompt", `{"query":"x","token_budget":0}`, 400, engram.EINVALID, []string{"token_budget"}},
			{"prompt unknown session", "POST", "/v1/prompt", `{"query":"x","token_budget":100,"session_id":"nope"}`, 404, engram.ENOTFOUND, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, e.raw(t, tc.method, tc.path, key, tc.body), tc.status, tc.code, tc.parts...)
			})
		}
		r := e.do(t, "PUT", "/v1/agents/bot/persona", key, strings.Repeat("x", 101), "Content-Type", "text/markdown")
		wantError(t, r, 413, engram.ETOOLARGE)
		r = e.do(t, "PUT", "/v1/agents/bot/persona", key, "x", "Content-Type", "image/png")
		wantError(t, r, 415, engram.EUNSUPPORTED)
		sameSnapshot(t, "memories after refused session input", before, e.snapshot(t, key))
		r = e.do(t, "GET", "/v1/sessions/s1/events", key, "")
		wantStatus(t, r, http.StatusOK)
		var a eventsAnswer
		mustDecode(t, r, &a)
		if len(a.Events) != 1 {
			t.Errorf("events after refused input: %d", len(a.Events))
		}
		if r := e.do(t, "GET", "/v1/sessions/s2/events", key, ""); r.Status != 404 {
			t.Errorf("a refused first post created session s2: %s", r)
		}
		if r := e.do(t, "PUT", "/v1/sessions/s3/state", key, `{"state":{"x":1}}`); r.Status != 200 {
			t.Errorf("state as the first write of s3: %s", r)
		}
	})
}

// TestSessionCreatedByState: a session's first write may be its state
// (PUT or PATCH), which creates it, open with no events, as a first
// event would; reads of an unknown session stay 404.
func TestSessionCreatedByState(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		wantError(t, e.do(t, "GET", "/v1/sessions/new/state", key, ""), 404, engram.ENOTFOUND)
		if s := state(t, e.do(t, "PUT", "/v1/sessions/new/state", key, `{"state":{"step":1}}`)); s.Version != 1 || string(s.State) != `{"step":1}` {
			t.Errorf("PUT on a new session: %+v", s)
		}
		r := e.do(t, "GET", "/v1/sessions/new/events", key, "")
		wantStatus(t, r, http.StatusOK)
		var a eventsAnswer
		mustDecode(t, r, &a)
		if a.Session.Status != engram.SessionOpen || a.Session.Events != 0 || len(a.Events) != 0 {
			t.Errorf("session made by its state: %+v", a)
		}
		r = e.do(t, "PATCH", "/v1/sessions/patched/state", key, `{"a":1}`, "Content-Type", "application/merge-patch+json")
		if s := state(t, r); s.Version != 1 || string(s.State) != `{"a":1}` {
			t.Errorf("PATCH on a new session: %+v", s)
		}
		if a := postEvents(t, e, key, "patched", `{"type":"query","content":"q"}`); a.Events[0].Seq != 1 {
			t.Errorf("first event after the state: %+v", a)
		}
	})
}

// TestSessionLifecycle: ending distils decisions into strategies (once,
// through the write guard) and closes the session (409 on new events and
// on a second end; events stay readable); an expired session is 404 on
// every route until the cleaner deletes it, after which the id is free.
// (The PUT of state before expiry must land within the 1 s TTL.)
func TestSessionLifecycle(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		e := newSessionEnvOn(t, db)
		short := newSessionEnvOn(t, db, func(c *configs.Config) { c.Sessions.TTL = time.Second })
		key, _ := e.tenant(t, "alpha")
		run := `{"events":[
			{"type":"trigger","content":"nightly build failed"},
			{"type":"query","content":"fix the flaky integration test"},
			{"type":"tool_call","name":"grep","args":{"q":"sleep"},"result":"3 matches"},
			{"type":"decision","content":"replace the fixed sleep with a readiness probe"},
			{"type":"llm_response","content":"Done: the probe waits for the port."}]}`
		postEvents(t, e, key, "run-1", run)
		r := e.do(t, "POST", "/v1/sessions/run-1/end", key, `{"outcome":"success","note":"green for 3 nights"}`)
		wantStatus(t, r, http.StatusOK)
		var end engram.SessionEnd
		mustDecode(t, r, &end)
		if end.Session.Status != "closed" || end.Session.Outcome != "success" || len(end.Strategies) != 2 || end.Deduplicated != 0 {
			t.Fatalf("end: %s", r)
		}
		for _, m := range end.Strategies {
			if m.Category != "strategy" || m.Type != "strategy" || !strings.Contains(string(m.Source), `"run-1"`) {
				t.Errorf("strategy: %+v", m)
			}
		}
		if want := "Worked for fix the flaky integration test: replace the fixed sleep with a readiness probe"; end.Strategies[1].Content != want {
			t.Errorf("decision strategy %q, want %q", end.Strategies[1].Content, want)
		}
		if c := end.Strategies[0].Content; !strings.Contains(c, "Succeeded: fix the flaky integration test") || !strings.Contains(c, "grep") || !strings.Contains(c, "green for 3 nights") {
			t.Errorf("run strategy %q", c)
		}
		wantError(t, e.do(t, "POST", "/v1/sessions/run-1/events", key, `{"type":"decision","content":"x"}`), 409, engram.ECONFLICT, "closed")
		wantError(t, e.do(t, "POST", "/v1/sessions/run-1/end", key, `{"outcome":"failure"}`), 409, engram.ECONFLICT, "closed")
		wantStatus(t, e.do(t, "GET", "/v1/sessions/run-1/context?token_limit=200", key, ""), http.StatusOK)
		// The same run again teaches nothing new.
		postEvents(t, e, key, "run-2", run)
		r = e.do(t, "POST", "/v1/sessions/run-2/end", key, `{"outcome":"success","note":"green for 3 nights"}`)
		wantStatus(t, r, http.StatusOK)
		mustDecode(t, r, &end)
		if end.Deduplicated != 2 || end.Strategies[1].ID == "" {
			t.Errorf("second end: %s", r)
		}
		// A failure says why.
		postEvents(t, e, key, "run-3", `{"events":[{"type":"query","content":"deploy on friday"},
			{"type":"tool_call","name":"deploy","result":{"error":"migration lock held"}},{"type":"decision","content":"deploy without a canary"}]}`)
		r = e.do(t, "POST", "/v1/sessions/run-3/end", key, `{"outcome":"failure","note":"rolled back"}`)
		wantStatus(t, r, http.StatusOK)
		mustDecode(t, r, &end)
		if len(end.Strategies) != 2 || !strings.Contains(end.Strategies[0].Content, "migration lock held") ||
			end.Strategies[1].Content != "Did not work for deploy on friday: deploy without a canary (rolled back)" {
			t.Errorf("failure strategies: %s", r)
		}

		postEvents(t, e, key, "chat", `{"type":"message","role":"user","content":"We land in Kyoto on Friday"}`)
		r = e.do(t, "POST", "/v1/sessions/chat/end", key, `{"outcome":"success"}`)
		wantStatus(t, r, http.StatusOK)
		if mustDecode(t, r, &end); len(end.Strategies) != 0 || end.Session.Status != "closed" {
			t.Errorf("a plain conversation distilled into %s", r)
		}

		postEvents(t, short, key, "short", `{"type":"message","role":"user","content":"hi"}`)
		wantStatus(t, short.do(t, "PUT", "/v1/sessions/short/state", key, `{"state":{"a":1}}`), http.StatusOK)
		time.Sleep(1200 * time.Millisecond)
		for _, tc := range [][3]string{
			{"POST", "/v1/sessions/short/events", `{"type":"message","role":"user","content":"still there?"}`},
			{"GET", "/v1/sessions/short/events", ""}, {"GET", "/v1/sessions/short/context?token_limit=100", ""},
			{"GET", "/v1/sessions/short/state", ""}, {"PATCH", "/v1/sessions/short/state", `{"a":2}`},
			{"POST", "/v1/sessions/short/end", `{"outcome":"success"}`},
		} {
			wantError(t, e.do(t, tc[0], tc[1], key, tc[2]), 404, engram.ENOTFOUND)
		}
		n, err := e.w.Cleanup(context.Background())
		if err != nil || n != 1 { // short; the runs live on
			t.Fatalf("cleanup: %d %v", n, err)
		}
		a := postEvents(t, e, key, "short", `{"type":"message","role":"user","content":"new thread"}`)
		if a.Events[0].Seq != 1 {
			t.Errorf("a cleaned id starts a new session: %+v", a)
		}
		if r := e.do(t, "GET", "/v1/sessions/short/state", key, ""); !strings.Contains(string(r.Body), `"version":0`) {
			t.Errorf("state of the new session: %s", r)
		}
	})
}

type stateAnswer struct {
	Scope   string          `json:"scope"`
	ScopeID string          `json:"scope_id"`
	State   json.RawMessage `json:"state"`
	Schema  json.RawMessage `json:"schema"`
	Version int64           `json:"version"`
}

func state(t testing.TB, r *response) stateAnswer {
	t.Helper()
	wantStatus(t, r, http.StatusOK)
	var s stateAnswer
	mustDecode(t, r, &s)
	return s
}

// TestSessionState: PUT sets the document and its schema, PATCH merges
// (RFC 7396), a document failing the schema is a 422 naming the schema
// path and writes nothing, and a resource's document is shared by its
// sessions.
func TestSessionState(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		postEvents(t, e, key, "t1", `{"resource_id":"doc-7","type":"message","role":"user","content":"hi"}`)
		postEvents(t, e, key, "t2", `{"resource_id":"doc-7","type":"message","role":"user","content":"hi again"}`)
		if s := state(t, e.do(t, "GET", "/v1/sessions/t1/state", key, "")); string(s.State) != "{}" || s.Version != 0 {
			t.Errorf("unset state: %+v", s)
		}
		schema := `{"type":"object","properties":{"step":{"type":"integer","minimum":0},"plan":{"type":"array","items":{"type":"string"}}},"required":["step"]}`
		s := state(t, e.do(t, "PUT", "/v1/sessions/t1/state", key, `{"state":{"step":1,"plan":["a","b"],"notes":{"x":1,"y":2}},"schema":`+schema+`}`))
		if s.Version != 1 || s.Scope != "session" || s.ScopeID != "t1" || len(s.Schema) == 0 {
			t.Errorf("put: %+v", s)
		}
		s = state(t, e.do(t, "PATCH", "/v1/sessions/t1/state", key, `{"step":2,"notes":{"x":null,"z":3}}`, "Content-Type", "application/merge-patch+json"))
		if string(s.State) != `{"notes":{"y":2,"z":3},"plan":["a","b"],"step":2}` || s.Version != 2 {
			t.Errorf("patched: %s v%d", s.State, s.Version)
		}
		for _, tc := range []struct{ method, body, path string }{
			{"PATCH", `{"step":-1}`, "#/properties/step/minimum"},
			{"PATCH", `{"step":null}`, "#/required"},
			{"PATCH", `{"plan":[1]}`, "#/properties/plan/items/type"},
			{"PUT", `{"state":{"step":"one"}}`, "#/properties/step/type"},
		} {
			wantError(t, e.do(t, tc.method, "/v1/sessions/t1/state", key, tc.body), 422, engram.EUNPROCESSABLE, tc.path)
		}
		if s := state(t, e.do(t, "GET", "/v1/sessions/t1/state", key, "")); s.Version != 2 || string(s.State) != `{"notes":{"y":2,"z":3},"plan":["a","b"],"step":2}` {
			t.Errorf("state after refused writes: %s v%d", s.State, s.Version)
		}
		// null removes the schema.
		if s := state(t, e.do(t, "PUT", "/v1/sessions/t1/state", key, `{"state":{"step":"free"},"schema":null}`)); len(s.Schema) != 0 || s.Version != 3 {
			t.Errorf("schema removed: %+v", s)
		}
		// The resource's document, shared by t1 and t2.
		state(t, e.do(t, "PUT", "/v1/sessions/t1/state?scope=resource", key, `{"state":{"title":"Q3 report"}}`))
		s = state(t, e.do(t, "PATCH", "/v1/sessions/t2/state?scope=resource", key, `{"status":"draft"}`))
		if s.ScopeID != "doc-7" || string(s.State) != `{"status":"draft","title":"Q3 report"}` {
			t.Errorf("resource state: %+v", s)
		}
		if s := state(t, e.do(t, "GET", "/v1/sessions/t2/state", key, "")); string(s.State) != "{}" {
			t.Errorf("t2's own state: %s", s.State)
		}
		postEvents(t, e, key, "t3", `{"type":"message","role":"user","content":"no resource"}`)
		wantError(t, e.do(t, "GET", "/v1/sessions/t3/state?scope=resource", key, ""), 400, engram.EINVALID, "resource_id")
	})
}

// TestSessionContextBudget: the fixed zone is never compressed, the last
// three rounds are whole, older ones one line each, and the context never
// exceeds the budget when re-counted, down to budgets that hold nothing
// but the header.
func TestSessionContextBudget(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		tok := storetest.Tokenizer(t)
		var evs []string
		evs = append(evs, `{"type":"trigger","content":"user opened the travel planner"}`,
			`{"type":"instruction","content":"answer in metric units; 用中文回答"}`)
		for i := 1; i <= 8; i++ {
			evs = append(evs,
				fmt.Sprintf(`{"type":"message","role":"user","content":"question %d about the trip to Kyoto and the temples we could visit on day %d"}`, i, i),
				fmt.Sprintf(`{"type":"tool_call","name":"search","args":{"q":"kyoto day %d"},"result":"%d results"}`, i, i),
				fmt.Sprintf(`{"type":"decision","content":"visit temple number %d in the morning"}`, i),
				fmt.Sprintf(`{"type":"message","role":"assistant","content":"answer %d: go early, it is quieter before nine"}`, i))
		}
		evs = append(evs, `{"type":"subtask","content":"book the ryokan for night 2"}`)
		postEvents(t, e, key, "trip", `{"events":[`+strings.Join(evs, ",")+`]}`)
		get := func(limit int) engram.SessionContext {
			r := e.do(t, "GET", fmt.Sprintf("/v1/sessions/trip/context?token_limit=%d", limit), key, "")
			wantStatus(t, r, http.StatusOK)
			var sc engram.SessionContext
			mustDecode(t, r, &sc)
			if n := tok.Count(sc.Context); n != sc.TokensUsed || n > limit {
				t.Fatalf("limit %d: counted %d, tokens_used %d:\n%s", limit, n, sc.TokensUsed, sc.Context)
			}
			return sc
		}
		sc := get(4000)
		lines := strings.Split(sc.Context, "\n")
		want := []string{"[Session trip]", "trigger: user opened the travel planner", "focus: book the ryokan for night 2",
			"instruction: answer in metric units; 用中文回答"}
		for i, w := range want {
			if lines[i] != w {
				t.Errorf("line %d %q, want %q", i, lines[i], w)
			}
		}
		if sc.Rounds.Whole != 3 || sc.Rounds.Compressed != 6 || sc.Rounds.Dropped != 0 {
			t.Errorf("rounds %+v, want 3 whole (rounds 8, the sub-task and 7) and 6 compressed", sc.Rounds)
		}
		if want := "- user: question 1 about the trip to Kyoto and the temples we could visit on day 1 | tools: search | decision: visit temple number 1 in the morning | assistant: answer 1: go early, it is quieter before nine"; lines[4] != want {
			t.Errorf("compressed round 1:\n%s\nwant\n%s", lines[4], want)
		}
		if !strings.Contains(sc.Context, "\nuser: question 7 about") || !strings.Contains(sc.Context, "\ntool search {\"q\":\"kyoto day 8\"} -> \"8 results\"\n") ||
			!strings.HasSuffix(sc.Context, "\nsubtask: book the ryokan for night 2") {
			t.Errorf("whole rounds missing:\n%s", sc.Context)
		}
		prev := sc.TokensUsed
		for _, limit := range []int{400, 200, 120, 80, 60, 40, 20, 8, 5, 1} {
			sc := get(limit)
			if sc.TokensUsed > prev {
				t.Errorf("limit %d used more (%d) than a larger one (%d)", limit, sc.TokensUsed, prev)
			}
			prev = sc.TokensUsed
			if limit >= 60 && !strings.Contains(sc.Context, "focus: book the ryokan") {
				t.Errorf("limit %d lost the fixed zone:\n%s", limit, sc.Context)
			}
		}
	})
}

// TestSessionContextChatSummary: with a chat endpoint configured, older
// rounds are the model's lines; a failing or malformed answer falls back
// to the deterministic lines.
func TestSessionContextChatSummary(t *testing.T) {
	var mode atomic.Int32
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct{ Role, Content string }
		}
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) != 2 {
			http.Error(w, "bad request", 400)
			return
		}
		n := strings.Count(req.Messages[1].Content, "Round ")
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf("summary of round %d", i+1)
		}
		switch mode.Load() {
		case 1:
			http.Error(w, "overloaded", 503)
			return
		case 2:
			lines = lines[1:]
		}
		content, _ := json.Marshal(lines)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": string(content)}}}})
	}))
	defer chat.Close()
	e := newSessionEnv(t, "sqlite", func(c *configs.Config) {
		c.Sessions.ChatBaseURL, c.Sessions.ChatAPIKey, c.Sessions.ChatModel = chat.URL+"/v1", "sk-test", "m1"
	})
	key, _ := e.tenant(t, "alpha")
	var evs []string
	for i := 1; i <= 5; i++ {
		evs = append(evs, fmt.Sprintf(`{"type":"message","role":"user","content":"question %d"}`, i),
			fmt.Sprintf(`{"type":"message","role":"assistant","content":"answer %d"}`, i))
	}
	postEvents(t, e, key, "c", `{"events":[`+strings.Join(evs, ",")+`]}`)
	get := func() engram.SessionContext {
		r := e.do(t, "GET", "/v1/sessions/c/context?token_limit=500", key, "")
		wantStatus(t, r, http.StatusOK)
		var sc engram.SessionContext
		mustDecode(t, r, &sc)
		return sc
	}
	sc := get()
	if sc.Summarizer != "chat:m1" || !strings.Contains(sc.Context, "\n- summary of round 1\n- summary of round 2\nuser: question 3") {
		t.Errorf("chat summary: %+v", sc)
	}
	for m, reason := range map[int32]string{1: "status 503", 2: "1 lines for 2 rounds"} {
		mode.Store(m)
		sc := get()
		if sc.Summarizer != "deterministic" || !strings.Contains(sc.Fallback, reason) ||
			!strings.Contains(sc.Context, "\n- user: question 1 | assistant: answer 1\n") {
			t.Errorf("fallback %d: %+v", m, sc)
		}
	}
}

// TestPersonaAndPrompt: personas are versioned and boot returns them
// first; a prompt joins persona, session and memories within one budget
// and its recall_id takes feedback.
func TestPersonaAndPrompt(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		tok := storetest.Tokenizer(t)
		r := e.do(t, "PUT", "/v1/agents/planner/persona", key, "# Planner\n\nYou plan trips. Be brief.", "Content-Type", "text/markdown")
		wantStatus(t, r, http.StatusOK)
		var p engram.Persona
		mustDecode(t, r, &p)
		if p.Version != 1 || p.AgentID != "planner" {
			t.Errorf("persona v1: %s", r)
		}
		r = e.do(t, "PUT", "/v1/agents/planner/persona", key, `{"markdown":"# Planner\n\nYou plan trips for families. Be brief and kind."}`)
		mustDecode(t, r, &p)
		if p.Version != 2 {
			t.Errorf("persona v2: %s", r)
		}
		r = e.do(t, "GET", "/v1/agents/planner/persona?version=1", key, "")
		mustDecode(t, r, &p)
		if p.Markdown != "# Planner\n\nYou plan trips. Be brief." || p.Version != 1 {
			t.Errorf("persona v1 read back: %s", r)
		}
		r = e.do(t, "GET", "/v1/agents/planner/persona", key, "", "Accept", "text/markdown")
		if string(r.Body) != "# Planner\n\nYou plan trips for families. Be brief and kind." {
			t.Errorf("persona as markdown: %s", r)
		}
		b := getBoot(t, e.env, key, "agent_id=planner")
		if b.Persona != "# Planner\n\nYou plan trips for families. Be brief and kind." || !strings.HasPrefix(b.Context, "[Agent Memory]\n- # Planner") {
			t.Errorf("boot: %+v", b)
		}

		create(t, e.env, key, `{"content":"The family prefers quiet temples over crowded shrines","category":"preference"}`)
		create(t, e.env, key, `{"content":"Kyoto buses are crowded; the subway is faster to Fushimi","category":"life"}`)
		postEvents(t, e, key, "plan-1", `{"events":[{"type":"query","content":"plan day 2 in Kyoto"},
			{"type":"message","role":"user","content":"We want temples in the morning"},
			{"type":"message","role":"assistant","content":"Noted: temples first"}]}`)
		for _, budget := range []int{2000, 300, 120, 60, 30, 10, 3} {
			r := e.do(t, "POST", "/v1/prompt", key, mustJSON(map[string]any{"query": "Plan trips for families: which temples should the family visit?",
				"token_budget": budget, "agent_id": "planner", "session_id": "plan-1"}))
			wantStatus(t, r, http.StatusOK)
			var pr engram.Prompt
			mustDecode(t, r, &pr)
			if n := tok.Count(pr.Context); n != pr.TokensUsed || n > budget {
				t.Fatalf("budget %d: counted %d, tokens_used %d", budget, n, pr.TokensUsed)
			}
			if pr.RecallID == "" {
				t.Errorf("budget %d: no recall_id", budget)
			}
			var names []string
			for _, part := range pr.Parts {
				names = append(names, part.Name)
				if part.Share != float64(part.Tokens)/float64(budget) {
					t.Errorf("part %s share %v", part.Name, part.Share)
				}
			}
			if budget == 2000 {
				if strings.Join(names, ",") != "persona,session,memories" || !strings.HasPrefix(pr.Context, "[Persona]\n# Planner") ||
					!strings.Contains(pr.Context, "\n\n[Session plan-1]\n") || !strings.Contains(pr.Context, "\n\n[Agent Memory]\n- The family prefers quiet temples") {
					t.Errorf("prompt parts %v:\n%s\n%+v\n%+v", names, pr.Context, pr.Recall.Items, pr.Recall.LeftOut)
				}
				recalled := false
				for _, it := range pr.Recall.Items {
					recalled = recalled || it.ID == p.MemoryID
				}
				if !recalled {
					t.Errorf("the query should recall the persona memory too: %+v", pr.Recall.Items)
				}
				if strings.Count(pr.Context, "You plan trips for families") != 1 {
					t.Errorf("persona said more than once:\n%s", pr.Context)
				}
				fb := e.do(t, "POST", "/v1/feedback", key, mustJSON(map[string]any{"recall_id": pr.RecallID, "thumb": "up"}))
				wantStatus(t, fb, http.StatusCreated)
			}
		}
	})
}

// TestSessionIsolation: another tenant's session answers like an unknown
// one on every route, and its posts make its own session.
func TestSessionIsolation(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		beta, _ := e.tenant(t, "beta")
		postEvents(t, e, alpha, "shared-name", `{"resource_id":"r","type":"message","role":"user","content":"alpha's secret plan"}`)
		state(t, e.do(t, "PUT", "/v1/sessions/shared-name/state", alpha, `{"state":{"secret":1}}`))
		for _, tc := range [][3]string{
			{"GET", "/v1/sessions/shared-name/events", ""}, {"GET", "/v1/sessions/shared-name/context?token_limit=100", ""},
			{"GET", "/v1/sessions/shared-name/state", ""}, {"GET", "/v1/sessions/shared-name/state?scope=resource", ""},
			{"POST", "/v1/sessions/shared-name/end", `{"outcome":"success"}`},
			{"POST", "/v1/prompt", `{"query":"plan","token_budget":100,"session_id":"shared-name"}`},
		} {
			wantError(t, e.do(t, tc[0], tc[1], beta, tc[2]), 404, engram.ENOTFOUND)
		}
		// beta's state write makes beta's own session of that name.
		if s := state(t, e.do(t, "PUT", "/v1/sessions/shared-name/state", beta, `{"state":{}}`)); s.Version != 1 {
			t.Errorf("beta's state: %+v", s)
		}
		a := postEvents(t, e, beta, "shared-name", `{"type":"message","role":"user","content":"beta's own"}`)
		if a.Events[0].Seq != 1 || a.Session.ResourceID != "" {
			t.Errorf("beta's session: %+v", a)
		}
		r := e.do(t, "GET", "/v1/sessions/shared-name/context?token_limit=200", alpha, "")
		if !strings.Contains(string(r.Body), "alpha's secret plan") || strings.Contains(string(r.Body), "beta") {
			t.Errorf("alpha's session after beta's post: %s", r)
		}
		if s := state(t, e.do(t, "GET", "/v1/sessions/shared-name/state", alpha, "")); string(s.State) != `{"secret":1}` {
			t.Errorf("alpha's state: %s", s.State)
		}
	})
}

// TestSessionsTwoServers: two servers on one database serve one session:
// events, the previous message across servers, state and its schema,
// closing.
func TestSessionsTwoServers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		e1 := newSessionEnvOn(t, storetest.OpenWith(t, o))
		e2 := newSessionEnvOn(t, storetest.OpenWith(t, o))
		key, _ := e1.tenant(t, "alpha")
		postEvents(t, e1, key, "s", `{"type":"message","speaker":"Ann","content":"the meeting moved to Thursday"}`)
		a := postEvents(t, e2, key, "s", `{"type":"message","speaker":"Bo","content":"ok, Thursday at ten then"}`)
		if a.Events[0].Seq != 2 {
			t.Errorf("seq on the second server: %d", a.Events[0].Seq)
		}
		if m := episode(t, e1, key, a.Events[0].MemoryID); m.Context != "Ann: the meeting moved to Thursday" {
			t.Errorf("context across servers: %q", m.Context)
		}
		state(t, e1.do(t, "PUT", "/v1/sessions/s/state", key, `{"state":{"n":0},"schema":{"properties":{"n":{"maximum":1}}}}`))
		state(t, e2.do(t, "PATCH", "/v1/sessions/s/state", key, `{"n":1}`))
		wantError(t, e2.do(t, "PATCH", "/v1/sessions/s/state", key, `{"n":2}`), 422, engram.EUNPROCESSABLE, "maximum")
		if s := state(t, e1.do(t, "GET", "/v1/sessions/s/state", key, "")); string(s.State) != `{"n":1}` || s.Version != 2 {
			t.Errorf("state across servers: %+v", s)
		}
		r := e2.do(t, "GET", "/v1/sessions/s/context?token_limit=100", key, "")
		if !strings.Contains(string(r.Body), "Ann: the meeting moved to Thursday") {
			t.Errorf("context on the second server: %s", r)
		}
		wantStatus(t, e1.do(t, "POST", "/v1/sessions/s/end", key, `{"outcome":"success"}`), http.StatusOK)
		wantError(t, e2.do(t, "POST", "/v1/sessions/s/events", key, `{"type":"message","speaker":"Ann","content":"late"}`), 409, engram.ECONFLICT)
	})
}
