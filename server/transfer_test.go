package server_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
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

// newTransferEnv is a recall server with export and import.
func newTransferEnv(t testing.TB, engine string) *env {
	t.Helper()
	db := storetest.Open(t, engine)
	cfg := configs.Default()
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	routes := router.NewService(router.New(rcfg), db, 0)
	scoring := learning.NewScoreConfig(cfg.Scoring)
	lexical := indextest.Wrap(db)
	rec := learning.NewRecaller(lexical, routes, learning.NewScorer(scoring, time.Now), storetest.Tokenizer(t), cfg.Recall, time.Now)
	lim := cfg.Limits
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Router: routes, Recall: rec, Transfer: db,
		Limits: server.Limits{MaxBodyBytes: 1 << 20, MaxImportBytes: 4 << 20, MaxJSONDepth: 32, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{db: db, lexical: lexical, h: s}
}

// secretKey makes a key of clearance secret for tenant.
func secretKey(t testing.TB, e *env, tenant string) string {
	t.Helper()
	key, id := e.tenant(t, tenant)
	level := engram.SecuritySecret
	if _, err := e.db.UpdateAPIKey(context.Background(), id, engram.KeyUpdate{Clearance: &level}); err != nil {
		t.Fatal(err)
	}
	return key
}

func importReq(t testing.TB, e *env, key, query, body string) *response {
	t.Helper()
	req := httptest.NewRequest("POST", "/v1/import"+query, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Authorization", "Bearer "+key)
	return e.serve(t, req)
}

// TestExportImportRecall: a tenant exported and imported into a fresh
// tenant gives the same recalls; the import's failure cases (a bad line
// named, a full tenant, a wrong media type, a key below secret) change
// nothing.
func TestExportImportRecall(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newTransferEnv(t, engine)
		src := secretKey(t, e, "src")
		for _, body := range []string{
			`{"content":"Maya prefers oat milk in her coffee","category":"preference","tags":["coffee"]}`,
			`{"content":"The team standup is at nine every weekday","category":"work"}`,
			`{"content":"Maya's dentist appointment is on Friday at 3pm","category":"life"}`,
			`{"content":"用户喜欢喝咖啡，不加糖","category":"preference"}`,
			`{"content":"Deploys go out on Tuesdays after the standup","category":"work","summary":"Tuesday deploys"}`,
			`{"content":"Maya is a nurse in Lisbon","category":"life","priority":"P0"}`,
		} {
			wantStatus(t, e.do(t, "POST", "/v1/memories", src, body), http.StatusCreated)
		}
		wantStatus(t, e.do(t, "PUT", "/v1/keys/user/preference/style", src, `{"content":"short answers","source":"chat"}`), http.StatusOK)

		internal, _ := e.tenant(t, "src")
		wantError(t, e.do(t, "GET", "/v1/export", internal, ""), http.StatusForbidden, "forbidden", "secret")
		r := e.do(t, "GET", "/v1/export", src, "")
		wantStatus(t, r, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/x-ndjson" {
			t.Fatalf("export Content-Type %q", ct)
		}
		export := string(r.Body)
		lines := strings.Split(strings.TrimSpace(export), "\n")
		if !strings.HasPrefix(lines[0], `{"format":"engram-export","version":1`) {
			t.Fatalf("header: %s", lines[0])
		}

		dst := secretKey(t, e, "dst")
		wantError(t, importReq(t, e, dst, "?ids=shuffle", export), http.StatusBadRequest, "invalid", "ids")
		wantError(t, importReq(t, e, dst, "?color=red", export), http.StatusBadRequest, "invalid")
		bad := strings.Join(append(append([]string{}, lines[:3]...), `{"type":"memory","data":{"content":42}}`), "\n")
		wantError(t, importReq(t, e, dst, "", bad), http.StatusBadRequest, "invalid", "line 4")
		wantError(t, e.do(t, "POST", "/v1/import", dst, export), http.StatusUnsupportedMediaType, "unsupported")
		dstInternal, _ := e.tenant(t, "dst")
		wantError(t, importReq(t, e, dstInternal, "", export), http.StatusForbidden, "forbidden")
		if p := e.do(t, "GET", "/v1/memories?include_deleted=true&include_archived=true", dst, "").page(t); len(p.Items) != 0 {
			t.Fatalf("refused imports wrote %d memories", len(p.Items))
		}

		r = importReq(t, e, dst, "", export)
		wantStatus(t, r, http.StatusOK)
		if o := r.object(t); o["tenant"] != "dst" || o["ids"] != "remap" {
			t.Fatalf("import: %s", r)
		}
		wantError(t, importReq(t, e, dst, "", export), http.StatusConflict, "conflict", "not empty")

		for _, q := range []string{"how does Maya take her coffee", "when is standup", "dentist", "咖啡", "what does Maya do", "deploy day"} {
			body := mustJSON(map[string]any{"query": q, "token_budget": 300})
			a, b := postRecall(t, e, src, map[string]any{"query": q, "token_budget": 300}), postRecall(t, e, dst, map[string]any{"query": q, "token_budget": 300})
			// Scores differ only by the retention of the moments apart the
			// two recalls ran.
			if a.Context != b.Context || len(a.Items) != len(b.Items) || len(a.Items) == 0 {
				t.Errorf("%s: recall differs after the round trip:\n%s\n---\n%s", body, a.Context, b.Context)
				continue
			}
			for i := range a.Items {
				if a.Items[i].Text != b.Items[i].Text || a.Items[i].ID == b.Items[i].ID || math.Abs(a.Items[i].Score-b.Items[i].Score) > 1e-6 {
					t.Errorf("%s: item %d: %+v vs %+v", q, i, a.Items[i], b.Items[i])
				}
			}
		}
	})
}
