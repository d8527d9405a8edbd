package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/jobs"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/server/openapitest"
	"github.com/engram-memory/engram/store/storetest"
	"github.com/engram-memory/engram/users"
	"github.com/engram-memory/engram/working"
)

// fullServer is a server with every optional part configured, so that
// every route is registered, as cmd/engram wires it (console and MCP
// aside: they are not part of the JSON API).
func fullServer(t *testing.T) *server.Server {
	t.Helper()
	db := storetest.Open(t, "sqlite")
	cfg := configs.Default()
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	routes := router.NewService(router.New(rcfg), db, 0)
	scorer := learning.NewScorer(learning.NewScoreConfig(cfg.Scoring), time.Now)
	tok := storetest.Tokenizer(t)
	rec := learning.NewRecaller(indextest.Wrap(db), routes, scorer, tok, cfg.Recall, time.Now)
	w := working.New(db, db, routes, rec, tok, working.Config{Sessions: cfg.Sessions, Limits: cfg.Limits,
		Categories: cfg.Memory.Categories, MaxBudget: cfg.Recall.MaxBudget}, time.Now, nil)
	refl := reflections.New(db, reflections.Config{Categories: cfg.Memory.Categories, MinGroup: 3, Dir: t.TempDir()}, nil)
	lim := cfg.Limits
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Router: routes, Recall: rec, Reflections: refl,
		Feedback: learning.NewFeedback(db, scorer, cfg.Feedback),
		Export: func(w io.Writer, format string) (server.PairEncoder, bool, error) {
			f, err := learning.ParseFormat(format)
			if err != nil {
				return nil, false, err
			}
			return learning.NewEncoder(w, f), f.Paired(), nil
		},
		Sessions: w, Personas: w, Prompt: w, Quotas: db, AdminKey: adminSecret, Admin: db, Transfer: db,
		Users: users.New(db, users.Config{Reflections: refl}, nil), Aliases: db,
		Jobs:   jobs.New(db, refl, nil, jobs.Config{Categories: cfg.Memory.Categories}, nil),
		Limits: server.Limits{MaxBodyBytes: lim.MaxBodyBytes, MaxImportBytes: lim.MaxImportBytes, MaxJSONDepth: lim.MaxJSONDepth, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// documented turns gin's pattern into the document's: :id is {id},
// *key is {key}; /v1/sessions/*rest dispatches to SessionActions.
func documented(method, ginPath string) []openapitest.Operation {
	if ginPath == "/v1/sessions/*rest" {
		var ops []openapitest.Operation // none for a method no action serves: the dispatcher's 405
		for action, methods := range server.SessionActions {
			if slices.Contains(methods, method) {
				ops = append(ops, openapitest.Operation{Method: method, Path: "/v1/sessions/{id}/" + action})
			}
		}
		return ops
	}
	segs := strings.Split(ginPath, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return []openapitest.Operation{{Method: method, Path: strings.Join(segs, "/")}}
}

// TestOpenAPICoversRoutes walks the router: every route of the JSON API
// is in server/openapi.json with its method, and every operation there
// is routed. The console and /mcp are other protocols, documented in
// docs/console.md and docs/mcp.md.
func TestOpenAPICoversRoutes(t *testing.T) {
	doc, err := openapitest.Parse(server.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	routed := map[openapitest.Operation]bool{}
	var missing []string
	for _, r := range fullServer(t).Routes() {
		if r.Path == "/mcp" || r.Path == "/console" || strings.HasPrefix(r.Path, "/console/") {
			continue
		}
		for _, op := range documented(r.Method, r.Path) {
			if routed[op] {
				continue
			}
			routed[op] = true
			if !doc.Has(op.Method, op.Path) {
				missing = append(missing, fmt.Sprintf("route %s (gin: %s %s) is missing from server/openapi.json: add paths[%q][%q] with its parameters, requestBody and responses",
					op, r.Method, r.Path, op.Path, strings.ToLower(op.Method)))
			}
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Error(m)
	}
	for _, op := range doc.Operations() {
		if !routed[op] {
			t.Errorf("server/openapi.json documents %s, which the server does not route", op)
		}
	}
}

// TestOpenAPIDocument: the document is served without a key, byte for
// byte; every operation is named once, answers errors in the one error
// shape, and every JSON example fits its schema.
func TestOpenAPIDocument(t *testing.T) {
	srv := fullServer(t)
	req, _ := http.NewRequest("GET", "/openapi.json", nil)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), server.OpenAPI()) ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /openapi.json without a key: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	doc, err := openapitest.Parse(server.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]openapitest.Operation{}
	paths := doc.Raw["paths"].(map[string]any)
	for _, op := range doc.Operations() {
		o := paths[op.Path].(map[string]any)[strings.ToLower(op.Method)].(map[string]any)
		id, _ := o["operationId"].(string)
		if prev, dup := ids[id]; id == "" || dup {
			t.Errorf("%s: operationId %q is empty or also %s's", op, id, prev)
		}
		ids[id] = op
		responses := o["responses"].(map[string]any)
		if def, _ := responses["default"].(map[string]any); def["$ref"] != "#/components/responses/Error" {
			t.Errorf("%s: responses.default must be #/components/responses/Error", op)
		}
		for status := range responses {
			if status != "default" && (len(status) != 3 || status[0] < '1' || status[0] > '5') {
				t.Errorf("%s: response %q is not a status", op, status)
			}
		}
	}
	if err := doc.CheckExamples(); err != nil {
		t.Error(err)
	}
	examples := 0
	for _, s := range doc.Raw["components"].(map[string]any)["schemas"].(map[string]any) {
		if _, ok := s.(map[string]any)["example"]; ok {
			examples++
		}
	}
	if examples < 8 {
		t.Errorf("%d component schemas carry an example; the main requests and answers should", examples)
	}
	if err := doc.Check(openapitest.Operation{Method: "GET", Path: "/v1/memories/{id}"}, 200, "application/json", []byte(`{"id":"mem_x"}`)); err == nil {
		t.Error("a memory without its required fields passed the schema")
	}
}
