package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// env is one server on a fresh store of one engine. Requests normally go
// through the handler in process (httptest.ResponseRecorder); raw sends
// bytes over TCP to a real listener so that no client cleans the path.
type env struct {
	db *store.DB
	// lexical is the store with the recall pipeline's index (newRecallEnv).
	lexical indextest.Store
	h       http.Handler
	srv     *httptest.Server
}

func newEnv(t testing.TB, engine string) *env {
	t.Helper()
	db := storetest.Open(t, engine)
	lim := configs.Default().Limits
	s, err := server.New(server.Config{
		Memories: db, Auth: db, Health: db, Aliases: db,
		Limits: server.Limits{MaxBodyBytes: 1 << 20, MaxJSONDepth: 32, MaxBatch: lim.MaxBatch, Keys: lim.KeyLimits()},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &env{db: db, h: s, srv: srv}
}

// tenant creates (or reuses) a tenant and returns a new API key's secret
// and id.
func (e *env) tenant(t testing.TB, name string) (secret, keyID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.db.EnsureTenant(ctx, name); err != nil {
		t.Fatal(err)
	}
	k, secret, err := e.db.CreateAPIKey(ctx, name, "test")
	if err != nil {
		t.Fatal(err)
	}
	return secret, k.ID
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r *response) String() string {
	b := string(r.Body)
	if len(b) > 400 {
		b = b[:400] + "…"
	}
	return fmt.Sprintf("%d %s", r.Status, b)
}

// object decodes the body as a JSON object.
func (r *response) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r)
	}
	return m
}

// memory decodes the body as a memory, or a create response's memory.
func (r *response) memory(t testing.TB) apiMemory {
	t.Helper()
	var w struct {
		Memory *apiMemory `json:"memory"`
	}
	if err := json.Unmarshal(r.Body, &w); err == nil && w.Memory != nil {
		return *w.Memory
	}
	var m apiMemory
	if err := json.Unmarshal(r.Body, &m); err != nil || m.ID == "" {
		t.Fatalf("response is not a memory: %v: %s", err, r)
	}
	return m
}

type apiMemory struct {
	ID       string          `json:"id"`
	Key      string          `json:"key"`
	Content  string          `json:"content"`
	Category string          `json:"category"`
	Tags     []string        `json:"tags"`
	Data     json.RawMessage `json:"data"`
	Valid    bool            `json:"valid"`
	Archived bool            `json:"archived"`
	Version  int64           `json:"version"`
}

type apiPage struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor string            `json:"next_cursor"`
}

func (r *response) page(t testing.TB) apiPage {
	t.Helper()
	var p apiPage
	if err := json.Unmarshal(r.Body, &p); err != nil || p.Items == nil {
		t.Fatalf("response is not a page: %v: %s", err, r)
	}
	return p
}

func (p apiPage) ids(t testing.TB) []string {
	t.Helper()
	ids := make([]string, len(p.Items))
	for i, it := range p.Items {
		var m apiMemory
		if err := json.Unmarshal(it, &m); err != nil {
			t.Fatal(err)
		}
		ids[i] = m.ID
	}
	return ids
}

// do serves one request in process. key "" sends no Authorization; a
// non-empty body is sent as application/json. headers are name, value
// pairs applied last; an empty value removes the header.
func (e *env) do(t testing.TB, method, path, key, body string, headers ...string) *response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	setHeaders(req.Header, headers)
	return e.serve(t, req)
}

func setHeaders(h http.Header, pairs []string) {
	if len(pairs)%2 != 0 {
		panic("headers must be name, value pairs")
	}
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			h.Del(pairs[i])
		} else {
			h.Set(pairs[i], pairs[i+1])
		}
	}
}

func (e *env) serve(t testing.TB, req *http.Request) *response {
	t.Helper()
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	r := &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	noServerError(t, req.Method, req.URL.String(), r)
	return r
}

func noServerError(t testing.TB, method, target string, r *response) {
	t.Helper()
	if r.Status >= 500 {
		t.Errorf("%s %s: server error %s", method, target, r)
	}
}

// raw writes the request line with target exactly as given over TCP, so
// that "..", "%2e%2e", "%00" and "//" reach the server untouched.
func (e *env) raw(t testing.TB, method, target, key, body string) *response {
	t.Helper()
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: engram.test\r\nConnection: close\r\n", method, target)
	if key != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", key)
	}
	if body != "" {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &response{Status: res.StatusCode, Header: res.Header, Body: data}
	noServerError(t, method, target, r)
	return r
}

// wantStatus fails unless r has status.
func wantStatus(t testing.TB, r *response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %s, want %d", r, status)
	}
}

// wantError checks the one error shape: status, {"error":{"code","message"}}
// and nothing else, a JSON content type, and a message containing every
// part.
func wantError(t testing.TB, r *response, status int, code string, parts ...string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status = %s, want %d", r, status)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error Content-Type = %q, want application/json", ct)
	}
	var body struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Error == nil {
		t.Errorf("error body is not {\"error\":{\"code\",\"message\"}}: %v: %s", err, r)
		return
	}
	if body.Error.Code != code {
		t.Errorf("error code = %q, want %q (%s)", body.Error.Code, code, r)
	}
	if strings.TrimSpace(body.Error.Message) == "" {
		t.Errorf("error message is empty: %s", r)
	}
	for _, p := range parts {
		if !strings.Contains(body.Error.Message, p) {
			t.Errorf("error message %q does not mention %q", body.Error.Message, p)
		}
	}
}

// snapshot is everything a tenant can observe of its memories: the list
// with tombstoned and archived ones, and each memory's history.
func (e *env) snapshot(t testing.TB, key string) string {
	t.Helper()
	r := e.do(t, "GET", "/v1/memories?include_deleted=true&include_archived=true&limit=500", key, "")
	wantStatus(t, r, http.StatusOK)
	p := r.page(t)
	if p.NextCursor != "" {
		t.Fatal("snapshot: more than one page")
	}
	var b strings.Builder
	b.Write(r.Body)
	for _, id := range p.ids(t) {
		h := e.do(t, "GET", "/v1/memories/"+id+"/history", key, "")
		wantStatus(t, h, http.StatusOK)
		b.WriteString("\n")
		b.Write(h.Body)
	}
	return b.String()
}

// sameSnapshot fails when got differs from want, showing where.
func sameSnapshot(t testing.TB, what, want, got string) {
	t.Helper()
	if want == got {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-120)
	t.Errorf("%s changed at byte %d:\nbefore: …%s…\nafter:  …%s…", what, i, clip(want[from:], 300), clip(got[from:], 300))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// mustJSON marshals v for a request body.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// mustDecode decodes the body into v.
func mustDecode(t testing.TB, r *response, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode response: %v: %s", err, r)
	}
}
