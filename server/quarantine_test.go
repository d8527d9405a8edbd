package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store/storetest"
)

// newQuarantineEnv is a recall server with the admin API, memory.gate
// off and memory.gate_mode quarantine: only the tenants that turn their
// own gate on are gated.
func newQuarantineEnv(t testing.TB, engine string) *env {
	t.Helper()
	db := storetest.Open(t, engine)
	cfg := configs.Default()
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	routes := router.NewService(router.New(rcfg), db, 0)
	lexical := indextest.Wrap(db)
	rec := learning.NewRecaller(lexical, routes, learning.NewScorer(learning.NewScoreConfig(cfg.Scoring), time.Now),
		storetest.Tokenizer(t), cfg.Recall, time.Now)
	lim := cfg.Limits
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Router: routes, Recall: rec, AdminKey: adminSecret, Admin: db,
		GateMode: engram.GateQuarantine,
		Limits:   server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, lexical: lexical, h: s}
}

// TestGateQuarantine: a tenant's own gate (admin API) turns the gate on
// for it alone; in quarantine mode a failing note is stored quarantined
// (archived, never recalled, listed with ?quarantined=true) until
// released; gate_mode refuse makes it a 422 again; a key write is always
// refused; bad settings are 400s that change nothing.
func TestGateQuarantine(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newQuarantineEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		beta, _ := e.tenant(t, "beta")
		A := adminSecret
		for _, body := range []string{`{"gate":"maybe"}`, `{"gate_mode":"drop"}`, `{"gate":true}`} {
			wantError(t, e.do(t, "PATCH", "/v1/admin/tenants/alpha", A, body), http.StatusBadRequest, "invalid")
		}
		r := e.do(t, "PATCH", "/v1/admin/tenants/alpha", A, `{"gate":"on"}`)
		wantStatus(t, r, http.StatusOK)
		if o := r.object(t); o["gate"] != "on" || o["gate_mode"] != "" {
			t.Fatalf("tenant: %s", r)
		}

		const chat = `{"content":"Thanks, sounds good!","category":"life"}`
		r = e.do(t, "POST", "/v1/memories", alpha, chat)
		wantStatus(t, r, http.StatusCreated)
		var held struct {
			Memory struct {
				ID          string `json:"id"`
				Quarantined bool   `json:"quarantined"`
				Archived    bool   `json:"archived"`
			} `json:"memory"`
		}
		if err := json.Unmarshal(r.Body, &held); err != nil || !held.Memory.Quarantined || !held.Memory.Archived {
			t.Fatalf("quarantined write: %s", r)
		}
		id := held.Memory.ID
		good := create(t, e, alpha, `{"content":"Carol's cat Dumpling only eats salmon kibble","category":"life"}`)
		wantError(t, e.do(t, "PUT", "/v1/keys/user/mood", alpha, `{"content":"ok thanks!","source":"chat"}`), http.StatusUnprocessableEntity, "unprocessable")
		// beta has no gate of its own and the server's is off.
		wantStatus(t, e.do(t, "POST", "/v1/memories", beta, chat), http.StatusCreated)

		recalled := func() bool {
			rec := postRecall(t, e, alpha, map[string]any{"query": "thanks sounds good", "token_budget": 300, "fill": true})
			return rankOfItems(rec.Items, id) >= 0
		}
		if recalled() {
			t.Fatal("a quarantined memory was recalled")
		}
		if ids := e.do(t, "GET", "/v1/memories?quarantined=true", alpha, "").page(t).ids(t); len(ids) != 1 || ids[0] != id {
			t.Fatalf("quarantined list: %v", ids)
		}
		for _, ids := range [][]string{
			e.do(t, "GET", "/v1/memories", alpha, "").page(t).ids(t),
			e.do(t, "GET", "/v1/memories?quarantined=false&include_archived=true", alpha, "").page(t).ids(t),
		} {
			if len(ids) != 1 || ids[0] != good.ID {
				t.Fatalf("list without the quarantined: %v", ids)
			}
		}
		wantError(t, e.do(t, "GET", "/v1/memories?quarantined=maybe", alpha, ""), http.StatusBadRequest, "invalid")

		before := e.snapshot(t, alpha)
		wantError(t, e.do(t, "PATCH", "/v1/memories/"+id, alpha, `{"archived":false}`), http.StatusConflict, "conflict", "release")
		wantError(t, e.do(t, "POST", "/v1/memories/"+good.ID+"/release", alpha, ""), http.StatusConflict, "conflict")
		wantError(t, e.do(t, "POST", "/v1/memories/mem_doesnotexist0000000/release", alpha, ""), http.StatusNotFound, "not_found")
		wantError(t, e.do(t, "POST", "/v1/memories/"+id+"/release", beta, ""), http.StatusNotFound, "not_found")
		wantError(t, e.do(t, "POST", "/v1/memories/"+id+"/release?now=1", alpha, ""), http.StatusBadRequest, "invalid")
		if after := e.snapshot(t, alpha); after != before {
			t.Fatal("a refused release changed the store")
		}
		r = e.do(t, "POST", "/v1/memories/"+id+"/release", alpha, "")
		wantStatus(t, r, http.StatusOK)
		if m := r.memory(t); m.Archived || m.Version != 2 {
			t.Fatalf("released: %s", r)
		}
		if !recalled() {
			t.Fatal("a released memory must be recalled")
		}

		wantStatus(t, e.do(t, "PATCH", "/v1/admin/tenants/alpha", A, `{"gate_mode":"refuse"}`), http.StatusOK)
		wantError(t, e.do(t, "POST", "/v1/memories", alpha, `{"content":"standup, sprint, deploys, approvals","category":"work"}`), http.StatusUnprocessableEntity, "unprocessable")
		wantStatus(t, e.do(t, "PATCH", "/v1/admin/tenants/alpha", A, `{"gate":"off"}`), http.StatusOK)
		wantStatus(t, e.do(t, "POST", "/v1/memories", alpha, `{"content":"standup, sprint, deploys, approvals","category":"work"}`), http.StatusCreated)
	})
}

// rankOfItems is the index of id among items, or -1.
func rankOfItems(items []engram.RecallItem, id string) int {
	for i, it := range items {
		if it.ID == id {
			return i
		}
	}
	return -1
}
