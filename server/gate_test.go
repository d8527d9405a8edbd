package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store/storetest"
)

// newGateEnv is newEnv with memory.gate set to on (true) or off.
func newGateEnv(t *testing.T, engine string, on bool) *env {
	t.Helper()
	db := storetest.Open(t, engine)
	lim := configs.Default().Limits
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Gate: on,
		Limits: server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &env{db: db, h: s, srv: srv}
}

// TestWriteGate: "gate": true holds POST /v1/memories, batch items and
// PUT /v1/keys to the four rules; a refusal is 422 unprocessable naming
// the rule and changes nothing, and so is a gate that is not a boolean
// (400).
func TestWriteGate(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newGateEnv(t, engine, false)
		key, _ := e.tenant(t, "alpha")
		wantStatus(t, e.do(t, "POST", "/v1/memories", key, `{"content":"Bob is allergic to shellfish and peanuts.","agent_id":"a1"}`), http.StatusCreated)
		wantStatus(t, e.do(t, "PUT", "/v1/keys/user/cat", key, `{"content":"Carol's cat Dumpling only eats salmon kibble.","source":"user"}`), http.StatusOK)
		before := e.snapshot(t, key)
		for _, tc := range []struct {
			name, method, path, body string
			status                   int
			code                     string
			parts                    []string
		}{
			{"small talk", "POST", "/v1/memories", `{"content":"Thanks, sounds good!","gate":true}`, 422, "unprocessable", []string{"durable"}},
			{"zh small talk", "POST", "/v1/memories", `{"content":"好的，谢谢！","gate":true}`, 422, "unprocessable", []string{"durable"}},
			{"dangling pronoun", "POST", "/v1/memories", `{"content":"She only eats salmon kibble.","gate":true}`, 422, "unprocessable", []string{"self_contained", "She"}},
			{"zh undated yesterday", "POST", "/v1/memories", `{"content":"昨天用户把会议改到了下午。","gate":true}`, 422, "unprocessable", []string{"self_contained", "昨天"}},
			{"keywords", "POST", "/v1/memories", `{"content":"python, golang, rust, docker, kubernetes","gate":true}`, 422, "unprocessable", []string{"specific"}},
			{"zh keywords", "POST", "/v1/memories", `{"content":"咖啡，奶茶，绿茶，果汁，可乐","gate":true}`, 422, "unprocessable", []string{"specific"}},
			{"repeat in scope", "POST", "/v1/memories", `{"content":"Bob is allergic to peanuts and shellfish.","agent_id":"a1","gate":true}`, 422, "unprocessable", []string{"repeat", "shellfish"}},
			{"batch item", "POST", "/v1/memories/batch", `{"memories":[{"content":"Dana runs the Berlin office.","gate":true},{"content":"lol nice","gate":true}]}`, 422, "unprocessable", []string{"memories[1]", "durable"}},
			{"key write", "PUT", "/v1/keys/user/plan", `{"content":"They moved the meeting to the afternoon.","source":"user","gate":true}`, 422, "unprocessable", []string{"self_contained"}},
			{"key repeats another key", "PUT", "/v1/keys/user/pet", `{"content":"Carol's cat Dumpling eats only salmon kibble!","source":"user","gate":true}`, 422, "unprocessable", []string{"repeat"}},
			{"gate not a bool", "POST", "/v1/memories", `{"content":"Dana runs the Berlin office.","gate":"yes"}`, 400, "invalid", nil},
			{"batch gate not a bool", "POST", "/v1/memories/batch", `{"memories":[{"content":"Dana runs the Berlin office.","gate":1}]}`, 400, "invalid", nil},
			{"key gate not a bool", "PUT", "/v1/keys/user/plan", `{"content":"Dana runs the Berlin office.","source":"user","gate":"on"}`, 400, "invalid", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, e.do(t, tc.method, tc.path, key, tc.body), tc.status, tc.code, tc.parts...)
				sameSnapshot(t, "memories after a refused write", before, e.snapshot(t, key))
			})
		}
		// What passes is stored: a fact, a near-duplicate in another
		// scope, a key rewritten with almost the same text (it replaces
		// itself), and small talk without the gate.
		for _, tc := range []struct{ method, path, body string }{
			{"POST", "/v1/memories", `{"content":"Dana runs the Berlin office.","gate":true}`},
			{"POST", "/v1/memories", `{"content":"王五的猫叫饺子，只吃三文鱼猫粮。","gate":true}`},
			{"POST", "/v1/memories", `{"content":"Bob is allergic to peanuts and shellfish.","agent_id":"a2","gate":true}`},
			{"PUT", "/v1/keys/user/cat", `{"content":"Carol's cat Dumpling eats only salmon kibble!","source":"user","gate":true}`},
			{"POST", "/v1/memories/batch", `{"memories":[{"content":"Erin moved to Lisbon in March 2024.","gate":true},{"content":"lol nice"}]}`},
			{"POST", "/v1/memories", `{"content":"Thanks, sounds good!"}`},
		} {
			if r := e.do(t, tc.method, tc.path, key, tc.body); r.Status != http.StatusOK && r.Status != http.StatusCreated {
				t.Errorf("%s %s %s: %s, want it stored", tc.method, tc.path, tc.body, r)
			}
		}
	})
}

// TestWriteGateTenantWide: with memory.gate on every write is gated, and
// "gate": false does not opt out.
func TestWriteGateTenantWide(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newGateEnv(t, engine, true)
		key, _ := e.tenant(t, "alpha")
		before := e.snapshot(t, key)
		for _, body := range []string{`{"content":"Thanks!"}`, `{"content":"谢谢！","gate":false}`} {
			wantError(t, e.do(t, "POST", "/v1/memories", key, body), 422, "unprocessable", "durable")
		}
		wantError(t, e.do(t, "PUT", "/v1/keys/user/x", key, `{"content":"它升级以后又坏了。","source":"user"}`), 422, "unprocessable", "self_contained")
		sameSnapshot(t, "memories after refused writes", before, e.snapshot(t, key))
		wantStatus(t, e.do(t, "POST", "/v1/memories", key, `{"content":"Dana runs the Berlin office."}`), http.StatusCreated)
		// A tombstone is not gated.
		wantStatus(t, e.do(t, "PUT", "/v1/keys/user/y", key, `{"content":"Dana prefers tea to coffee.","source":"user"}`), http.StatusOK)
		wantStatus(t, e.do(t, "DELETE", "/v1/keys/user/y", key, ""), http.StatusOK)
	})
}
