package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/mcp"
	"github.com/engram-memory/engram/mcp/mcptest"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
	"github.com/engram-memory/engram/working"
)

// env is the HTTP server with MCP mounted at /mcp, wired as cmd/engram
// wires it, on one store.
type env struct {
	db    *store.DB
	tools *mcp.Server
	srv   *httptest.Server
}

func newEnv(t testing.TB, db *store.DB) *env {
	return newEnvWith(t, db, db)
}

// newEnvWith serves memories (normally the store itself) on db.
func newEnvWith(t testing.TB, db *store.DB, memories engram.MemoryService, gated ...bool) *env {
	t.Helper()
	cfg := configs.Default()
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	routes := router.NewService(router.New(rcfg), db, 0)
	scorer := learning.NewScorer(learning.NewScoreConfig(cfg.Scoring), time.Now)
	rec := learning.NewRecaller(indextest.Wrap(db), routes, scorer, storetest.Tokenizer(t), cfg.Recall, time.Now).WithLinks(db)
	fb := learning.NewFeedback(db, scorer, cfg.Feedback)
	refl := reflections.New(db, reflections.Config{Categories: cfg.Memory.Categories, MinGroup: cfg.Reflector.MinGroup}, nil)
	lim := cfg.Limits
	w := working.New(db, db, routes, rec, storetest.Tokenizer(t), working.Config{Sessions: cfg.Sessions, Limits: lim,
		Categories: cfg.Memory.Categories, MaxBudget: cfg.Recall.MaxBudget}, time.Now, nil)
	tools := mcp.New(mcp.Config{
		Memories: memories, Aliases: db, Recall: rec, Feedback: fb, Reflections: refl, Sessions: w, Prompt: w, Auth: db, Health: db, Categories: cfg.Memory.Categories,
		Limits: mcp.Limits{MaxArgumentBytes: lim.MaxBodyBytes, MaxJSONDepth: lim.MaxJSONDepth, MaxBatch: lim.MaxBatch, MaxBudget: cfg.Recall.MaxBudget,
			Keys: lim.KeyLimits()},
		Version: "test", Gate: len(gated) > 0 && gated[0],
	})
	s, err := server.New(server.Config{
		Gate:     len(gated) > 0 && gated[0],
		Memories: memories, Auth: db, Health: db, Router: routes, Recall: rec, Feedback: fb, Reflections: refl, MCP: tools.Handler(),
		Limits: server.Limits{MaxBodyBytes: lim.MaxBodyBytes, MaxJSONDepth: lim.MaxJSONDepth, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &env{db: db, tools: tools, srv: srv}
}

// key makes a new API key of tenant and returns its secret.
func key(t testing.TB, db *store.DB, tenant string) string {
	t.Helper()
	if _, err := db.EnsureTenant(context.Background(), tenant); err != nil {
		t.Fatal(err)
	}
	_, secret, err := db.CreateAPIKey(context.Background(), tenant, "test")
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// bearer adds the API key to every request, sending each to the next of
// urls in turn (one URL: always the same server).
type bearer struct {
	key  string
	urls []string
	n    atomic.Int64
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	base := b.urls[int(b.n.Add(1))%len(b.urls)]
	r.URL.Host = strings.TrimPrefix(base, "http://")
	r.Host = r.URL.Host
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session with the SDK's client over streamable
// HTTP, with key, to the servers at urls.
func connect(t testing.TB, key string, urls ...string) *mcptest.Client {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: urls[0] + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &bearer{key: key, urls: urls}}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "engram-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return mcptest.NewClient(t, cs)
}

// TestHTTPScenario: over streamable HTTP, with two tenants' keys, on
// both engines.
func TestHTTPScenario(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		mcptest.Scenario(t, connect(t, key(t, e.db, "acme"), e.srv.URL), connect(t, key(t, e.db, "globex"), e.srv.URL))
	})
}

// TestTwoServersOneDatabase: the HTTP handler is stateless, so a client
// behind a load balancer may reach a different server with every request:
// here initialize, the tools list and every call alternate between two
// servers on one database, and what one writes the other recalls.
func TestTwoServersOneDatabase(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		a, b := newEnv(t, db), newEnv(t, db)
		c := connect(t, key(t, db, "acme"), a.srv.URL, b.srv.URL)
		facts := map[string]string{ // query → what answers it
			"release train": "The release train leaves on Thursdays",
			"deploy freeze": "Deploys freeze over the winter holidays",
			"周会":            "周会改到每周二上午",
			"on-call rota":  "The on-call rota changes every Monday",
		}
		ids := map[string]string{}
		for q, text := range facts {
			ids[q] = c.Call(t, "remember", map[string]any{"content": text, "category": "work"})["memory"].(map[string]any)["id"].(string)
		}
		for range 2 {
			for q, id := range ids {
				if rec := c.Call(t, "recall", map[string]any{"query": q}); !mcptest.Recalled(rec, id) {
					t.Fatalf("a recall of %q through either server misses %s: %v", q, id, rec)
				}
			}
		}
	})
}

// TestRecallFillAndIdentity: the recall tool takes fill and identity as
// POST /v1/recall does: the identity memory goes in, first and marked
// pinned, only when asked for, and fill packs the memories the relevance
// cut leaves out.
func TestRecallFillAndIdentity(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		c := connect(t, key(t, e.db, "acme"), e.srv.URL)
		remember := func(content, category string, p0 bool) string {
			args := map[string]any{"content": content, "category": category}
			if p0 {
				args["priority"] = "P0"
			}
			return c.Call(t, "remember", args)["memory"].(map[string]any)["id"].(string)
		}
		name := remember("The user's name is Ada Okafor", "life", true)
		train := remember("The release train leaves on Thursdays", "work", false)
		remember("The release notes list every merged ticket", "work", false)
		for i := range 10 {
			remember(fmt.Sprintf("Lantern glacier note %d", i), "life", false)
		}
		plain := c.Call(t, "recall", map[string]any{"query": "when does the release train leave?"})
		if !mcptest.Recalled(plain, train) || mcptest.Recalled(plain, name) {
			t.Errorf("plain recall: %v", plain["items"])
		}
		identity := c.Call(t, "recall", map[string]any{"query": "when does the release train leave?", "identity": true})
		if first := identity["items"].([]any)[0].(map[string]any); first["id"] != name || first["pinned"] != true || !mcptest.Recalled(identity, train) {
			t.Errorf("identity: %v, want the identity memory first, pinned", identity["items"])
		}
		for _, it := range identity["items"].([]any) {
			if item := it.(map[string]any); item["id"] != name && item["pinned"] != nil {
				t.Errorf("identity: %v is marked pinned", item)
			}
		}
		fill := c.Call(t, "recall", map[string]any{"query": "when does the release train leave?", "fill": true})
		if len(fill["items"].([]any)) <= len(plain["items"].([]any)) {
			t.Errorf("fill: %v, plain %v", fill["items"], plain["items"])
		}
	})
}

// rest sends a JSON request to the REST API and returns the status and
// body.
func rest(t testing.TB, e *env, key, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestErrorsMatchREST: one mistake gets one code and one message, whether
// it is sent to the REST API or to a tool.
func TestErrorsMatchREST(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		k := key(t, e.db, "acme")
		c := connect(t, k, e.srv.URL)
		for _, tc := range []struct {
			method, path, body string
			tool               string
		}{
			{"POST", "/v1/recall", `{"query":"coffee","token_budget":"lots"}`, "recall"},
			{"POST", "/v1/recall", `{"query":"","token_budget":100}`, "recall"},
			{"POST", "/v1/recall", `{"query":"coffee","token_budget":100000}`, "recall"},
			{"POST", "/v1/recall", `{"query":"coffee","token_budget":100,"limit":3}`, "recall"},
			{"POST", "/v1/recall", `{"query":"coffee","token_budget":100,"tags":"coffee"}`, "recall"},
			{"POST", "/v1/recall", `{"query":"coffee","token_budget":100,"fill":"yes"}`, "recall"},
			{"POST", "/v1/recall", `{"query":"coffee","token_budget":100,"identity":1}`, "recall"},
			{"POST", "/v1/memories", `{"content":"x","category":"gossip"}`, "remember"},
			{"POST", "/v1/memories", `{"content":"a\u0000b"}`, "remember"},
			{"POST", "/v1/memories", `{"content":"x","priority":"P9"}`, "remember"},
			{"POST", "/v1/memories", `{"content":"x","importance":2}`, "remember"},
			{"POST", "/v1/memories", `{"content":"x","expires_at":"tomorrow"}`, "remember"},
			{"POST", "/v1/memories", `{"content":"x","source":{"kind":"web","name":"blog"}}`, "remember"},
			{"POST", "/v1/memories", `{"content":"` + strings.Repeat("長", 32769) + `"}`, "remember"},
			{"PUT", "/v1/keys/user/name", `{"content":"Ada"}`, "set_memory"},
			{"PUT", "/v1/keys/kb/paris", `{"content":"Paris is in France","source":"chat"}`, "set_memory"},
			{"PUT", "/v1/keys/user/name", `{"source":"chat"}`, "set_memory"},
			{"POST", "/v1/feedback", `{"memory_id":"mem_unknown","thumb":"up"}`, "feedback"},
			{"POST", "/v1/feedback", `{"memory_id":"mem_unknown","thumb":""}`, "feedback"},
			{"POST", "/v1/feedback", `{"memory_id":"mem_unknown","rating":0}`, "feedback"},
			{"POST", "/v1/feedback", `{"memory_id":"mem_unknown","thumb":"up","rating":5}`, "feedback"},
			{"POST", "/v1/feedback", `{"thumb":"up"}`, "feedback"},
			{"POST", "/v1/reflect", `{"category":"gossip"}`, "reflect"},
			{"POST", "/v1/reflect", `{"category":7}`, "reflect"},
		} {
			status, body := rest(t, e, k, tc.method, tc.path, tc.body)
			if status < 400 || status >= 500 {
				t.Fatalf("%s %s %s: %d %s", tc.method, tc.path, tc.body, status, body)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.body), &args); err != nil {
				t.Fatal(err)
			}
			if tc.tool == "set_memory" {
				args["key"] = strings.TrimPrefix(tc.path, "/v1/keys")
			}
			code, msg := c.CallError(t, tc.tool, args)
			want := `{"error":{"code":"` + code + `","message":` + quote(msg) + `}}`
			if strings.TrimSpace(body) != want {
				t.Errorf("%s %s: REST says %s, the %s tool %s", tc.method, tc.path, body, tc.tool, want)
			}
		}
	})
}

// TestGateMatchesREST: with memory.gate on, the tools that write
// (remember, set_memory) are held to the write gate as the REST writes
// are: the same note gets the same refusal at both doors, and neither
// stores anything.
func TestGateMatchesREST(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		e := newEnvWith(t, db, db, true)
		k := key(t, e.db, "acme")
		c := connect(t, k, e.srv.URL)
		for _, tc := range []struct {
			method, path, body string
			tool               string
		}{
			{"POST", "/v1/memories", `{"content":"Thanks, Mel!"}`, "remember"},
			{"POST", "/v1/memories", `{"content":"好的，没问题"}`, "remember"},
			{"POST", "/v1/memories", `{"content":"She moved there yesterday"}`, "remember"},
			{"PUT", "/v1/keys/user/note", `{"content":"Thanks, Mel!"}`, "set_memory"},
		} {
			status, body := rest(t, e, k, tc.method, tc.path, tc.body)
			if status != http.StatusUnprocessableEntity || !strings.Contains(body, "write gate") {
				t.Fatalf("%s %s %s: %d %s", tc.method, tc.path, tc.body, status, body)
			}
			var args map[string]any
			if err := json.Unmarshal([]byte(tc.body), &args); err != nil {
				t.Fatal(err)
			}
			if tc.tool == "set_memory" {
				args["key"] = strings.TrimPrefix(tc.path, "/v1/keys")
			}
			code, msg := c.CallError(t, tc.tool, args)
			want := `{"error":{"code":"` + code + `","message":` + quote(msg) + `}}`
			if strings.TrimSpace(body) != want {
				t.Errorf("%s %s: REST says %s, the %s tool %s", tc.method, tc.path, body, tc.tool, want)
			}
		}
		if _, body := rest(t, e, k, "GET", "/v1/memories", ""); !strings.Contains(body, `"items":[]`) {
			t.Errorf("the gate let a write through: %s", body)
		}
	})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestHTTPAuth: /mcp needs a live bearer key and refuses like the REST API.
func TestHTTPAuth(t *testing.T) {
	e := newEnv(t, storetest.Open(t, "sqlite"))
	k := key(t, e.db, "acme")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	post := func(path, auth, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, auth := range []string{"", "Bearer ", "Basic " + k, "Bearer egk_not_a_key"} {
		mresp, mbody := post("/mcp", auth, init)
		rresp, rbody := post("/v1/recall", auth, `{"query":"x","token_budget":10}`)
		if mresp.StatusCode != http.StatusUnauthorized || mbody != strings.TrimSpace(rbody) ||
			mresp.Header.Get("WWW-Authenticate") != rresp.Header.Get("WWW-Authenticate") {
			t.Errorf("auth %q: /mcp %d %s, REST %d %s", auth, mresp.StatusCode, mbody, rresp.StatusCode, rbody)
		}
	}
	if resp, body := post("/mcp", "Bearer "+k, init); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"serverInfo":{"name":"engram"`) {
		t.Fatalf("initialize with a key: %d %s", resp.StatusCode, body)
	}
	// A key revoked between two calls of one client stops the second.
	c := connect(t, k, e.srv.URL)
	c.Call(t, "status", map[string]any{})
	keys, err := e.db.FindAPIKeys(context.Background(), "acme")
	if err != nil || len(keys) != 1 {
		t.Fatal(keys, err)
	}
	if err := e.db.RevokeAPIKey(context.Background(), keys[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.S.CallTool(context.Background(), &sdk.CallToolParams{Name: "status", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a revoked key still calls tools")
	}
}

// faulty is the store with CreateMemory failing: it panics on the content
// "panic" and fails with a raw (non-engram) error otherwise.
type faulty struct{ *store.DB }

func (f faulty) CreateMemory(_ context.Context, m *engram.Memory) (*engram.CreateResult, error) {
	if m.Content == "panic" {
		panic("store exploded")
	}
	return nil, errors.New("disk on fire at /var/lib/engram")
}

// TestFailuresAreToolErrors: a panic or an internal error in a tool is a
// tool error with the REST API's "internal error", never the raw text,
// and the server keeps serving.
func TestFailuresAreToolErrors(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnvWith(t, db, faulty{db})
	c := connect(t, key(t, db, "acme"), e.srv.URL)
	for _, content := range []string{"panic", "anything"} {
		code, msg := c.CallError(t, "remember", map[string]any{"content": content})
		if code != engram.EINTERNAL || msg != "internal error" {
			t.Fatalf("remember %q: %s %q", content, code, msg)
		}
	}
	if s := c.Call(t, "status", map[string]any{}); s["store"] != "ok" {
		t.Fatalf("status after failures: %v", s)
	}
}

// TestArgumentLimits: arguments over the size or depth limits are refused
// before anything runs.
func TestArgumentLimits(t *testing.T) {
	e := newEnv(t, storetest.Open(t, "sqlite"))
	k := key(t, e.db, "acme")
	c := connect(t, k, e.srv.URL)
	deep := any("x")
	for range 40 {
		deep = []any{deep}
	}
	if code, msg := c.CallError(t, "set_memory", map[string]any{"key": "/deep", "content": deep, "source": "chat"}); code != "invalid" ||
		msg != "JSON is nested deeper than 32 levels" {
		t.Fatalf("deep arguments: %s %q", code, msg)
	}
	// Over HTTP the request body limit (limits.max_body_bytes) comes first.
	big := strings.Repeat("x", 1<<20)
	if _, err := c.S.CallTool(context.Background(), &sdk.CallToolParams{Name: "remember", Arguments: map[string]any{"content": big}}); err == nil {
		t.Fatal("a request over the body limit was served")
	}
	// Nothing of either call was written.
	if status, body := rest(t, e, k, "GET", "/v1/memories?include_deleted=true", ""); status != http.StatusOK || body != `{"items":[]}` {
		t.Fatalf("after refused calls: %d %s", status, body)
	}
}
