package server_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// badFixture is tenant alpha with a memory of every state, tenant beta
// with two memories, and list cursors made for them.
type badFixture struct {
	e           *env
	alpha       string // alpha's API key
	beta        string
	m1          apiMemory // preference, updated once: version 2
	m2          apiMemory // key /user/style
	m3          apiMemory // tombstoned
	m4          apiMemory // archived
	m5          apiMemory // preference, "User likes tea"
	kb          apiMemory // key /kb/go/maps with provenance
	alphaCursor string    // next_cursor of alpha's list with limit=1
	betaCursor  string
}

func newBadFixture(t *testing.T, engine string) *badFixture {
	t.Helper()
	e := newEnv(t, engine)
	f := &badFixture{e: e}
	f.alpha, _ = e.tenant(t, "alpha")
	f.beta, _ = e.tenant(t, "beta")

	f.m1 = create(t, e, f.alpha, `{"content":"The user prefers dark roast coffee","category":"preference","tags":["coffee"]}`)
	r := e.do(t, "PATCH", "/v1/memories/"+f.m1.ID, f.alpha, `{"summary":"coffee order"}`, "If-Match", `"1"`)
	wantStatus(t, r, http.StatusOK)
	f.m1 = r.memory(t)
	if f.m1.Version != 2 {
		t.Fatalf("m1 version %d after one update", f.m1.Version)
	}
	r = e.do(t, "PUT", "/v1/keys/user/style", f.alpha, `{"content":"concise answers","source":"user"}`)
	wantStatus(t, r, http.StatusOK)
	f.m2 = r.memory(t)
	f.m3 = create(t, e, f.alpha, `{"content":"Old phone number 555-0100"}`)
	wantStatus(t, e.do(t, "DELETE", "/v1/memories/"+f.m3.ID, f.alpha, ""), http.StatusOK)
	f.m4 = create(t, e, f.alpha, `{"content":"Archived note about the garden"}`)
	wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+f.m4.ID, f.alpha, `{"archived":true}`), http.StatusOK)
	f.m5 = create(t, e, f.alpha, `{"content":"User likes tea","category":"preference"}`)
	r = e.do(t, "PUT", "/v1/keys/kb/go/maps", f.alpha, `{"content":"Go maps are not safe for concurrent writes",
		"source":{"kind":"web","name":"go.dev","retrieved_at":"2025-01-02T03:04:05Z","locator":{"url":"https://go.dev/doc"}}}`)
	wantStatus(t, r, http.StatusOK)
	f.kb = r.memory(t)

	create(t, e, f.beta, `{"content":"Beta tenant grocery list"}`)
	create(t, e, f.beta, `{"content":"Beta tenant second note"}`)

	f.alphaCursor = nextCursor(t, e, f.alpha, "/v1/memories?limit=1")
	f.betaCursor = nextCursor(t, e, f.beta, "/v1/memories?limit=1")
	return f
}

func create(t *testing.T, e *env, key, body string) apiMemory {
	t.Helper()
	r := e.do(t, "POST", "/v1/memories", key, body)
	wantStatus(t, r, http.StatusCreated)
	return r.memory(t)
}

func nextCursor(t *testing.T, e *env, key, path string) string {
	t.Helper()
	r := e.do(t, "GET", path, key, "")
	wantStatus(t, r, http.StatusOK)
	c := r.page(t).NextCursor
	if c == "" {
		t.Fatalf("GET %s: no next_cursor", path)
	}
	return c
}

type badCase struct {
	name    string
	method  string
	path    string
	body    string
	headers []string
	raw     bool   // send over TCP with the path exactly as written
	chunked bool   // send without Content-Length
	key     string // API key; alpha's when empty
	target  string // a GET path whose response must stay byte for byte the same
	status  int
	code    string
	msg     []string // parts the error message must contain
}

const (
	invalid  = "invalid"
	tooLarge = "too_large"
	notFound = "not_found"
	conflict = "conflict"
)

func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func (f *badFixture) cases() []badCase {
	m1 := "/v1/memories/" + f.m1.ID
	const okKey = `{"content":"x","source":"test"}`
	huge := `{"content":"` + strings.Repeat("a", 10<<20) + `"}`
	justOver := `{"content":"` + strings.Repeat("a", 1<<20) + `"}`
	long := strings.Repeat("x", 33000)
	tags33 := make([]string, 33)
	for i := range tags33 {
		tags33[i] = "t" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	web := `{"kind":"web","name":"x"}`
	// a cursor whose payload was changed but whose signature was kept
	_, sig, _ := strings.Cut(f.alphaCursor, ".")
	tampered := base64.RawURLEncoding.EncodeToString([]byte(`{"a":999999}`)) + "." + sig
	random := base64.RawURLEncoding.EncodeToString([]byte(`{"a":5}`)) + "." + base64.RawURLEncoding.EncodeToString([]byte("0123456789abcdef"))

	return []badCase{
		// --- keys in the path (sent raw: no client cleans them) ---
		{name: "key dot-dot", method: "PUT", path: "/v1/keys/a/../b", raw: true, body: okKey, status: 400, code: invalid, msg: []string{`".."`}},
		{name: "key encoded dot-dot", method: "PUT", path: "/v1/keys/a/%2e%2e/b", raw: true, body: okKey, status: 400, code: invalid, msg: []string{`".."`}},
		{name: "key encoded upper dot-dot", method: "PUT", path: "/v1/keys/user/%2E%2E/style", raw: true, body: okKey, target: "/v1/keys/user/style", status: 400, code: invalid, msg: []string{`".."`}},
		{name: "key dot", method: "PUT", path: "/v1/keys/a/./b", raw: true, body: okKey, status: 400, code: invalid, msg: []string{`"."`}},
		{name: "key encoded dot", method: "PUT", path: "/v1/keys/a/%2e/b", raw: true, body: okKey, status: 400, code: invalid, msg: []string{`"."`}},
		{name: "key NUL", method: "PUT", path: "/v1/keys/a%00b", raw: true, body: okKey, status: 400, code: invalid, msg: []string{"control character"}},
		{name: "key newline", method: "PUT", path: "/v1/keys/a%0Ab", raw: true, body: okKey, status: 400, code: invalid, msg: []string{"control character"}},
		{name: "key CRLF", method: "PUT", path: "/v1/keys/a%0D%0AX-Evil:%201", raw: true, body: okKey, status: 400, code: invalid, msg: []string{"control character"}},
		{name: "key invalid UTF-8", method: "PUT", path: "/v1/keys/a%FFb", raw: true, body: okKey, status: 400, code: invalid, msg: []string{"UTF-8"}},
		{name: "key 300-byte segment", method: "PUT", path: "/v1/keys/" + strings.Repeat("s", 300), body: okKey, status: 400, code: invalid, msg: []string{"longer than 200 bytes"}},
		{name: "key over 1024 bytes", method: "PUT", path: "/v1/keys" + strings.Repeat("/"+strings.Repeat("k", 150), 7), body: okKey, status: 400, code: invalid, msg: []string{"longer than 1024 bytes"}},
		{name: "key leading empty segment", method: "PUT", path: "/v1/keys//a", raw: true, body: okKey, status: 400, code: invalid, msg: []string{"empty segment"}},
		{name: "key inner empty segment", method: "PUT", path: "/v1/keys/a//b", raw: true, body: okKey, status: 400, code: invalid, msg: []string{"empty segment"}},
		{name: "key trailing slash", method: "PUT", path: "/v1/keys/a/", body: okKey, status: 400, code: invalid, msg: []string{"empty segment"}},
		{name: "key root only", method: "PUT", path: "/v1/keys/", body: okKey, status: 400, code: invalid, msg: []string{"at least one segment"}},
		{name: "GET key dot-dot", method: "GET", path: "/v1/keys/user/../user/style", raw: true, status: 400, code: invalid, msg: []string{`".."`}},
		{name: "GET key NUL", method: "GET", path: "/v1/keys/user/style%00", raw: true, status: 400, code: invalid, msg: []string{"control character"}},
		{name: "DELETE key encoded dot-dot", method: "DELETE", path: "/v1/keys/user/%2e%2e/user/style", raw: true, status: 400, code: invalid, msg: []string{`".."`}},
		{name: "DELETE key trailing slash", method: "DELETE", path: "/v1/keys/user/style/", target: "/v1/keys/user/style", status: 400, code: invalid, msg: []string{"empty segment"}},

		// --- keys in a POST body ---
		{name: "POST key without leading slash", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"user/x","source":"test"}`, status: 400, code: invalid, msg: []string{`start with "/"`}},
		{name: "POST key dot-dot", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"/a/../b","source":"test"}`, status: 400, code: invalid, msg: []string{`".."`}},
		{name: "POST key NUL", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"/a\u0000b","source":"test"}`, status: 400, code: invalid, msg: []string{"NUL"}},
		{name: "POST key newline", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"/a\nb","source":"test"}`, status: 400, code: invalid, msg: []string{"control character"}},
		{name: "POST key empty segment", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"//a","source":"test"}`, status: 400, code: invalid, msg: []string{"empty segment"}},
		{name: "POST key trailing slash", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"/a/","source":"test"}`, status: 400, code: invalid, msg: []string{"empty segment"}},
		{name: "POST key 300-byte segment", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"/` + strings.Repeat("s", 300) + `","source":"test"}`, status: 400, code: invalid, msg: []string{"longer than 200 bytes"}},
		{name: "POST key without source", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"/user/x"}`, status: 400, code: invalid, msg: []string{"source is required"}},
		{name: "POST key already taken", method: "POST", path: "/v1/memories", body: `{"content":"other","key":"/user/style","source":"test"}`, target: "/v1/keys/user/style", status: 409, code: conflict, msg: []string{"/user/style"}},

		// --- provenance ---
		{name: "kb key with string source", method: "PUT", path: "/v1/keys/kb/x", body: `{"content":"fact","source":"manual"}`, status: 400, code: invalid, msg: []string{"kind", "name", "retrieved_at", "locator"}},
		{name: "kb key with web source lacking provenance", method: "PUT", path: "/v1/keys/kb/x", body: `{"content":"fact","source":` + web + `}`, status: 400, code: invalid, msg: []string{"retrieved_at, locator"}},
		{name: "kb key with empty source object", method: "PUT", path: "/v1/keys/kb/x", body: `{"content":"fact","source":{}}`, status: 400, code: invalid, msg: []string{"kind, name, retrieved_at, locator"}},
		{name: "kb key with bad retrieved_at", method: "PUT", path: "/v1/keys/kb/x", body: `{"content":"fact","source":{"kind":"web","name":"x","retrieved_at":"yesterday","locator":"https://x"}}`, status: 400, code: invalid, msg: []string{"retrieved_at", "RFC 3339"}},
		{name: "kb key with empty locator", method: "PUT", path: "/v1/keys/kb/x", body: `{"content":"fact","source":{"kind":"web","name":"x","retrieved_at":"2025-01-01T00:00:00Z","locator":{}}}`, status: 400, code: invalid, msg: []string{"(locator)"}},
		{name: "kb key overwrite loses provenance", method: "PUT", path: "/v1/keys/kb/go/maps", body: `{"content":"changed","source":` + web + `}`, target: "/v1/keys/kb/go/maps", status: 400, code: invalid, msg: []string{"retrieved_at, locator"}},
		{name: "web source lacking provenance", method: "PUT", path: "/v1/keys/notes/x", body: `{"content":"fact","source":` + web + `}`, status: 400, code: invalid, msg: []string{"retrieved_at, locator"}},
		{name: "tool source lacking locator", method: "PUT", path: "/v1/keys/notes/x", body: `{"content":"fact","source":{"kind":"tool","name":"x","retrieved_at":"2025-01-01T00:00:00Z"}}`, status: 400, code: invalid, msg: []string{"(locator)"}},
		{name: "POST kb key lacking provenance", method: "POST", path: "/v1/memories", body: `{"content":"fact","key":"/kb/x","source":` + web + `}`, status: 400, code: invalid, msg: []string{"retrieved_at, locator"}},
		{name: "POST web source lacking provenance", method: "POST", path: "/v1/memories", body: `{"content":"fact","key":"/notes/x","source":` + web + `}`, status: 400, code: invalid, msg: []string{"retrieved_at, locator"}},
		{name: "PUT key without source", method: "PUT", path: "/v1/keys/user/x", body: `{"content":"x"}`, status: 400, code: invalid, msg: []string{"source is required"}},
		{name: "PUT key with empty source", method: "PUT", path: "/v1/keys/user/x", body: `{"content":"x","source":""}`, status: 400, code: invalid, msg: []string{"source must not be empty"}},
		{name: "PUT key with numeric source", method: "PUT", path: "/v1/keys/user/x", body: `{"content":"x","source":5}`, status: 400, code: invalid, msg: []string{"source must be a string or an object"}},
		{name: "PUT key without content", method: "PUT", path: "/v1/keys/user/x", body: `{"source":"test"}`, status: 400, code: invalid, msg: []string{"content is required"}},

		// --- key writes against versions and absent keys ---
		{name: "PUT key stale If-Match", method: "PUT", path: "/v1/keys/user/style", body: `{"content":"changed","source":"test"}`, headers: []string{"If-Match", `"2"`}, target: "/v1/keys/user/style", status: 409, code: conflict, msg: []string{"version"}},
		{name: "PUT new key with If-Match", method: "PUT", path: "/v1/keys/user/new", body: okKey, headers: []string{"If-Match", `"1"`}, status: 409, code: conflict, msg: []string{"does not exist"}},
		{name: "PUT key garbage If-Match", method: "PUT", path: "/v1/keys/user/style", body: `{"content":"changed","source":"test"}`, headers: []string{"If-Match", "latest"}, target: "/v1/keys/user/style", status: 400, code: invalid, msg: []string{"If-Match"}},
		{name: "PUT null on absent key", method: "PUT", path: "/v1/keys/never/written", body: `{"content":null,"source":"test"}`, status: 404, code: notFound},
		{name: "DELETE absent key", method: "DELETE", path: "/v1/keys/never/written", status: 404, code: notFound},
		{name: "DELETE key stale If-Match", method: "DELETE", path: "/v1/keys/user/style", headers: []string{"If-Match", `"5"`}, target: "/v1/keys/user/style", status: 409, code: conflict, msg: []string{"version"}},
		{name: "DELETE key garbage If-Match", method: "DELETE", path: "/v1/keys/user/style", headers: []string{"If-Match", `"v1"`}, target: "/v1/keys/user/style", status: 400, code: invalid, msg: []string{"If-Match"}},
		{name: "GET absent key", method: "GET", path: "/v1/keys/never/written", status: 404, code: notFound},
		{name: "PUT key content too long", method: "PUT", path: "/v1/keys/user/style", body: `{"content":"` + long + `","source":"test"}`, target: "/v1/keys/user/style", status: 413, code: tooLarge, msg: []string{"33000", "32768"}},

		// --- bodies ---
		{name: "10 MiB body", method: "POST", path: "/v1/memories", body: huge, status: 413, code: tooLarge, msg: []string{"1048576 bytes"}},
		{name: "10 MiB chunked body", method: "POST", path: "/v1/memories", body: huge, chunked: true, status: 413, code: tooLarge, msg: []string{"1048576 bytes"}},
		{name: "body one byte over", method: "POST", path: "/v1/memories", body: justOver[:1<<20] + "a", status: 413, code: tooLarge, msg: []string{"1048576 bytes"}},
		{name: "10 MiB PATCH", method: "PATCH", path: m1, body: huge, target: m1, status: 413, code: tooLarge},
		{name: "10 MiB PUT key", method: "PUT", path: "/v1/keys/user/style", body: huge, target: "/v1/keys/user/style", status: 413, code: tooLarge},
		{name: "10 MiB rollback", method: "POST", path: m1 + "/rollback", body: huge, target: m1, status: 413, code: tooLarge},
		{name: "nested 10000 deep", method: "POST", path: "/v1/memories", body: nested(10000), status: 400, code: invalid, msg: []string{"nested deeper than 32"}},
		{name: "nested data 40 deep", method: "POST", path: "/v1/memories", body: `{"content":"x","data":` + nested(40) + `}`, status: 400, code: invalid, msg: []string{"nested deeper than 32"}},
		{name: "nested key content 40 deep", method: "PUT", path: "/v1/keys/user/deep", body: `{"content":` + nested(40) + `,"source":"test"}`, status: 400, code: invalid, msg: []string{"nested deeper than 32"}},
		{name: "invalid UTF-8", method: "POST", path: "/v1/memories", body: "{\"content\":\"caf\xe9\"}", status: 400, code: invalid, msg: []string{"UTF-8"}},
		{name: "invalid UTF-8 in PATCH", method: "PATCH", path: m1, body: "{\"content\":\"\xff\xfe\"}", target: m1, status: 400, code: invalid, msg: []string{"UTF-8"}},
		{name: "unknown field", method: "POST", path: "/v1/memories", body: `{"content":"x","colour":"red"}`, status: 400, code: invalid, msg: []string{`"colour"`}},
		{name: "unknown field in PATCH", method: "PATCH", path: m1, body: `{"contents":"x"}`, target: m1, status: 400, code: invalid, msg: []string{`"contents"`}},
		{name: "unknown field in PUT key", method: "PUT", path: "/v1/keys/user/style", body: `{"content":"x","source":"t","key":"/other"}`, target: "/v1/keys/user/style", status: 400, code: invalid, msg: []string{`"key"`}},
		{name: "importance as string", method: "POST", path: "/v1/memories", body: `{"content":"x","importance":"high"}`, status: 400, code: invalid, msg: []string{"importance", "number"}},
		{name: "tags as string", method: "POST", path: "/v1/memories", body: `{"content":"x","tags":"a"}`, status: 400, code: invalid, msg: []string{"tags", "array"}},
		{name: "content as number", method: "POST", path: "/v1/memories", body: `{"content":5}`, status: 400, code: invalid, msg: []string{"content", "string"}},
		{name: "priority as number", method: "POST", path: "/v1/memories", body: `{"content":"x","priority":1}`, status: 400, code: invalid, msg: []string{"priority"}},
		{name: "importance overflow", method: "POST", path: "/v1/memories", body: `{"content":"x","importance":1e400}`, status: 400, code: invalid, msg: []string{"importance"}},
		{name: "tags as string in PATCH", method: "PATCH", path: m1, body: `{"tags":"a"}`, target: m1, status: 400, code: invalid, msg: []string{"tags"}},
		{name: "needs_revision as string in PATCH", method: "PATCH", path: m1, body: `{"needs_revision":"yes"}`, target: m1, status: 400, code: invalid, msg: []string{"needs_revision"}},
		{name: "trailing object", method: "POST", path: "/v1/memories", body: `{"content":"x"} {"content":"y"}`, status: 400, code: invalid, msg: []string{"after the JSON object"}},
		{name: "trailing garbage", method: "POST", path: "/v1/memories", body: `{"content":"x"}garbage`, status: 400, code: invalid, msg: []string{"after the JSON object"}},
		{name: "trailing data in PATCH", method: "PATCH", path: m1, body: `{"content":"x"}]`, target: m1, status: 400, code: invalid, msg: []string{"after the JSON object"}},
		{name: "empty body", method: "POST", path: "/v1/memories", headers: []string{"Content-Type", "application/json"}, status: 400, code: invalid, msg: []string{"empty"}},
		{name: "blank body", method: "POST", path: "/v1/memories", body: " \n\t ", status: 400, code: invalid, msg: []string{"empty"}},
		{name: "empty PATCH body", method: "PATCH", path: m1, headers: []string{"Content-Type", "application/json"}, target: m1, status: 400, code: invalid, msg: []string{"empty"}},
		{name: "empty rollback body", method: "POST", path: m1 + "/rollback", headers: []string{"Content-Type", "application/json"}, target: m1, status: 400, code: invalid, msg: []string{"empty"}},
		{name: "empty PUT key body", method: "PUT", path: "/v1/keys/user/style", headers: []string{"Content-Type", "application/json"}, target: "/v1/keys/user/style", status: 400, code: invalid, msg: []string{"empty"}},
		{name: "array body", method: "POST", path: "/v1/memories", body: `[{"content":"x"}]`, status: 400, code: invalid, msg: []string{"JSON object"}},
		{name: "string body", method: "POST", path: "/v1/memories", body: `"x"`, status: 400, code: invalid, msg: []string{"JSON object"}},
		{name: "truncated JSON", method: "POST", path: "/v1/memories", body: `{"content":`, status: 400, code: invalid, msg: []string{"malformed JSON"}},
		{name: "trailing comma", method: "POST", path: "/v1/memories", body: `{"content":"x",}`, status: 400, code: invalid, msg: []string{"malformed JSON"}},
		{name: "text/plain", method: "POST", path: "/v1/memories", body: `{"content":"x"}`, headers: []string{"Content-Type", "text/plain"}, status: 415, code: "unsupported", msg: []string{"application/json"}},
		{name: "form content type", method: "POST", path: "/v1/memories", body: `content=x`, headers: []string{"Content-Type", "application/x-www-form-urlencoded"}, status: 415, code: "unsupported", msg: []string{"application/json"}},
		{name: "malformed content type", method: "POST", path: "/v1/memories", body: `{"content":"x"}`, headers: []string{"Content-Type", ";;"}, status: 415, code: "unsupported"},
		{name: "json-ish content type", method: "POST", path: "/v1/memories", body: `{"content":"x"}`, headers: []string{"Content-Type", "application/jsonx"}, status: 415, code: "unsupported"},
		{name: "PATCH text/plain", method: "PATCH", path: m1, body: `{"content":"x"}`, headers: []string{"Content-Type", "text/plain"}, target: m1, status: 415, code: "unsupported"},
		{name: "PUT key text/plain", method: "PUT", path: "/v1/keys/user/style", body: okKey, headers: []string{"Content-Type", "text/plain"}, target: "/v1/keys/user/style", status: 415, code: "unsupported"},
		{name: "rollback text/plain", method: "POST", path: m1 + "/rollback", body: `{"version":1}`, headers: []string{"Content-Type", "text/plain"}, target: m1, status: 415, code: "unsupported"},

		// --- field values ---
		{name: "content too long", method: "POST", path: "/v1/memories", body: `{"content":"` + long + `"}`, status: 413, code: tooLarge, msg: []string{"33000", "32768"}},
		{name: "33 tags", method: "POST", path: "/v1/memories", body: mustJSON(map[string]any{"content": "x", "tags": tags33}), status: 400, code: invalid, msg: []string{"33 tags", "32"}},
		{name: "tag too long", method: "POST", path: "/v1/memories", body: `{"content":"x","tags":["` + strings.Repeat("t", 65) + `"]}`, status: 400, code: invalid, msg: []string{"longer than 64"}},
		{name: "empty tag", method: "POST", path: "/v1/memories", body: `{"content":"x","tags":["a"," "]}`, status: 400, code: invalid, msg: []string{"tags must not be empty"}},
		{name: "summary too long", method: "POST", path: "/v1/memories", body: `{"content":"x","summary":"` + strings.Repeat("s", 4097) + `"}`, status: 413, code: tooLarge, msg: []string{"summary"}},
		{name: "empty content", method: "POST", path: "/v1/memories", body: `{"content":""}`, status: 400, code: invalid, msg: []string{"content must not be empty"}},
		{name: "blank content", method: "POST", path: "/v1/memories", body: `{"content":"  \n "}`, status: 400, code: invalid, msg: []string{"content must not be empty"}},
		{name: "null body", method: "POST", path: "/v1/memories", body: `null`, status: 400, code: invalid, msg: []string{"content"}},
		{name: "unknown category", method: "POST", path: "/v1/memories", body: `{"content":"x","category":"secrets"}`, status: 400, code: invalid, msg: []string{`"secrets"`}},
		{name: "bad priority", method: "POST", path: "/v1/memories", body: `{"content":"x","priority":"P9"}`, status: 400, code: invalid, msg: []string{"priority"}},
		{name: "importance above 1", method: "POST", path: "/v1/memories", body: `{"content":"x","importance":1.5}`, status: 400, code: invalid, msg: []string{"importance"}},
		{name: "negative confidence", method: "POST", path: "/v1/memories", body: `{"content":"x","confidence":-0.1}`, status: 400, code: invalid, msg: []string{"confidence"}},
		{name: "bad security level", method: "POST", path: "/v1/memories", body: `{"content":"x","security_level":"top"}`, status: 400, code: invalid, msg: []string{"security_level"}},
		{name: "agent_id with newline", method: "POST", path: "/v1/memories", body: `{"content":"x","agent_id":"a\nb"}`, status: 400, code: invalid, msg: []string{"agent_id"}},

		// --- list ---
		{name: "limit -1", method: "GET", path: "/v1/memories?limit=-1", status: 400, code: invalid, msg: []string{"limit"}},
		{name: "limit 0", method: "GET", path: "/v1/memories?limit=0", status: 400, code: invalid, msg: []string{"limit"}},
		{name: "limit 100000", method: "GET", path: "/v1/memories?limit=100000", status: 400, code: invalid, msg: []string{"limit", "500"}},
		{name: "limit 501", method: "GET", path: "/v1/memories?limit=501", status: 400, code: invalid, msg: []string{"limit", "500"}},
		{name: "limit abc", method: "GET", path: "/v1/memories?limit=abc", status: 400, code: invalid, msg: []string{"limit"}},
		{name: "limit 1.5", method: "GET", path: "/v1/memories?limit=1.5", status: 400, code: invalid, msg: []string{"limit"}},
		{name: "limit overflow", method: "GET", path: "/v1/memories?limit=99999999999999999999", status: 400, code: invalid, msg: []string{"limit"}},
		{name: "cursor random", method: "GET", path: "/v1/memories?cursor=" + random, status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "cursor garbage", method: "GET", path: "/v1/memories?cursor=not-a-cursor", status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "cursor tampered payload", method: "GET", path: "/v1/memories?cursor=" + tampered, status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "cursor too long", method: "GET", path: "/v1/memories?cursor=" + strings.Repeat("A", 300) + "." + sig, status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "cursor of another tenant", method: "GET", path: "/v1/memories?limit=1&cursor=" + f.betaCursor, status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "cursor with another tag", method: "GET", path: "/v1/memories?limit=1&tag=coffee&cursor=" + f.alphaCursor, status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "cursor with include_deleted", method: "GET", path: "/v1/memories?limit=1&include_deleted=true&cursor=" + f.alphaCursor, status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "cursor with a query", method: "GET", path: "/v1/memories?limit=1&q=coffee&cursor=" + f.alphaCursor, status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "unknown query parameter", method: "GET", path: "/v1/memories?colour=red", status: 400, code: invalid, msg: []string{`"colour"`}},
		{name: "misspelt filter", method: "GET", path: "/v1/memories?includeDeleted=true", status: 400, code: invalid, msg: []string{`"includeDeleted"`}},
		{name: "repeated filter", method: "GET", path: "/v1/memories?tag=a&tag=b", status: 400, code: invalid, msg: []string{`"tag"`, "more than once"}},
		{name: "needs_revision maybe", method: "GET", path: "/v1/memories?needs_revision=maybe", status: 400, code: invalid, msg: []string{"needs_revision"}},
		{name: "include_deleted yes", method: "GET", path: "/v1/memories?include_deleted=yes", status: 400, code: invalid, msg: []string{"include_deleted"}},
		{name: "include_archived 2", method: "GET", path: "/v1/memories?include_archived=2", status: 400, code: invalid, msg: []string{"include_archived"}},

		// --- PATCH ---
		{name: "PATCH stale If-Match", method: "PATCH", path: m1, body: `{"content":"changed"}`, headers: []string{"If-Match", `"1"`}, target: m1, status: 409, code: conflict, msg: []string{"version 2", "not 1"}},
		{name: "PATCH stale weak If-Match", method: "PATCH", path: m1, body: `{"content":"changed"}`, headers: []string{"If-Match", `W/"1"`}, target: m1, status: 409, code: conflict},
		{name: "PATCH stale body version", method: "PATCH", path: m1, body: `{"content":"changed","version":1}`, target: m1, status: 409, code: conflict},
		{name: "PATCH future If-Match", method: "PATCH", path: m1, body: `{"content":"changed"}`, headers: []string{"If-Match", `"3"`}, target: m1, status: 409, code: conflict},
		{name: "PATCH If-Match and version disagree", method: "PATCH", path: m1, body: `{"content":"changed","version":1}`, headers: []string{"If-Match", `"2"`}, target: m1, status: 400, code: invalid, msg: []string{"disagree"}},
		{name: "PATCH garbage If-Match", method: "PATCH", path: m1, body: `{"content":"changed"}`, headers: []string{"If-Match", "garbage"}, target: m1, status: 400, code: invalid, msg: []string{"If-Match"}},
		{name: "PATCH If-Match 0", method: "PATCH", path: m1, body: `{"content":"changed"}`, headers: []string{"If-Match", `"0"`}, target: m1, status: 400, code: invalid, msg: []string{"If-Match"}},
		{name: "PATCH If-Match negative", method: "PATCH", path: m1, body: `{"content":"changed"}`, headers: []string{"If-Match", `"-2"`}, target: m1, status: 400, code: invalid, msg: []string{"If-Match"}},
		{name: "PATCH If-Match list", method: "PATCH", path: m1, body: `{"content":"changed"}`, headers: []string{"If-Match", `"1", "2"`}, target: m1, status: 400, code: invalid, msg: []string{"If-Match"}},
		{name: "PATCH unknown id", method: "PATCH", path: "/v1/memories/mem_doesnotexist", body: `{"content":"changed"}`, status: 404, code: notFound},
		{name: "PATCH deleted memory", method: "PATCH", path: "/v1/memories/" + f.m3.ID, body: `{"content":"revived"}`, target: "/v1/memories/" + f.m3.ID, status: 409, code: conflict, msg: []string{"deleted"}},
		{name: "PATCH bad priority", method: "PATCH", path: m1, body: `{"priority":"P9"}`, target: m1, status: 400, code: invalid, msg: []string{"priority"}},
		{name: "PATCH importance 2", method: "PATCH", path: m1, body: `{"importance":2}`, target: m1, status: 400, code: invalid, msg: []string{"importance"}},
		{name: "PATCH unknown category", method: "PATCH", path: m1, body: `{"category":"secrets"}`, target: m1, status: 400, code: invalid, msg: []string{`"secrets"`}},
		{name: "PATCH empty content", method: "PATCH", path: m1, body: `{"content":""}`, target: m1, status: 400, code: invalid, msg: []string{"content must not be empty"}},
		{name: "PATCH bad expires_at", method: "PATCH", path: m1, body: `{"expires_at":"tomorrow"}`, target: m1, status: 400, code: invalid, msg: []string{"expires_at"}},
		{name: "PATCH empty tag", method: "PATCH", path: m1, body: `{"tags":["a",""]}`, target: m1, status: 400, code: invalid, msg: []string{"tags"}},
		{name: "PATCH 33 tags", method: "PATCH", path: m1, body: mustJSON(map[string]any{"tags": tags33}), target: m1, status: 400, code: invalid, msg: []string{"33 tags"}},
		{name: "PATCH content too long", method: "PATCH", path: m1, body: `{"content":"` + long + `"}`, target: m1, status: 413, code: tooLarge, msg: []string{"33000"}},
		{name: "PATCH to a duplicate content", method: "PATCH", path: m1, body: `{"content":"User likes tea"}`, target: m1, status: 409, code: conflict},

		// --- DELETE, history, GET ---
		{name: "DELETE unknown id", method: "DELETE", path: "/v1/memories/mem_doesnotexist", status: 404, code: notFound},
		{name: "DELETE stale If-Match", method: "DELETE", path: m1, headers: []string{"If-Match", `"1"`}, target: m1, status: 409, code: conflict, msg: []string{"version"}},
		{name: "DELETE garbage If-Match", method: "DELETE", path: m1, headers: []string{"If-Match", "*"}, target: m1, status: 400, code: invalid, msg: []string{"If-Match"}},
		{name: "GET unknown id", method: "GET", path: "/v1/memories/mem_doesnotexist", status: 404, code: notFound},
		{name: "history unknown id", method: "GET", path: "/v1/memories/mem_doesnotexist/history", status: 404, code: notFound},

		// --- rollback ---
		{name: "rollback to version 0", method: "POST", path: m1 + "/rollback", body: `{"version":0}`, target: m1, status: 400, code: invalid, msg: []string{"version"}},
		{name: "rollback to negative version", method: "POST", path: m1 + "/rollback", body: `{"version":-1}`, target: m1, status: 400, code: invalid, msg: []string{"version"}},
		{name: "rollback to current version", method: "POST", path: m1 + "/rollback", body: `{"version":2}`, target: m1, status: 400, code: invalid, msg: []string{"version"}},
		{name: "rollback to future version", method: "POST", path: m1 + "/rollback", body: `{"version":99}`, target: m1, status: 400, code: invalid, msg: []string{"version"}},
		{name: "rollback version as string", method: "POST", path: m1 + "/rollback", body: `{"version":"1"}`, target: m1, status: 400, code: invalid, msg: []string{"version"}},
		{name: "rollback without version", method: "POST", path: m1 + "/rollback", body: `{}`, target: m1, status: 400, code: invalid, msg: []string{"version"}},
		{name: "rollback stale If-Match", method: "POST", path: m1 + "/rollback", body: `{"version":1}`, headers: []string{"If-Match", `"1"`}, target: m1, status: 409, code: conflict},
		{name: "rollback garbage If-Match", method: "POST", path: m1 + "/rollback", body: `{"version":1}`, headers: []string{"If-Match", "two"}, target: m1, status: 400, code: invalid, msg: []string{"If-Match"}},
		{name: "rollback unknown id", method: "POST", path: "/v1/memories/mem_doesnotexist/rollback", body: `{"version":1}`, status: 404, code: notFound},
		{name: "rollback unknown field", method: "POST", path: m1 + "/rollback", body: `{"version":1,"to":1}`, target: m1, status: 400, code: invalid, msg: []string{`"to"`}},

		// --- strict JSON: one spelling, one value per field ---
		{name: "duplicate field", method: "POST", path: "/v1/memories", body: `{"content":"first","content":"second"}`, status: 400, code: invalid, msg: []string{"duplicate", `"content"`}},
		{name: "duplicate field in data", method: "POST", path: "/v1/memories", body: `{"content":"dup data","data":{"a":1,"b":{"x":1,"x":2}}}`, status: 400, code: invalid, msg: []string{"duplicate", `"x"`}},
		{name: "duplicate field in a batch", method: "POST", path: "/v1/memories/batch", body: `{"memories":[{"content":"a","tags":["t"],"tags":["u"]}]}`, status: 400, code: invalid, msg: []string{"duplicate", `"tags"`}},
		{name: "duplicate field in a patch", method: "PATCH", path: m1, body: `{"summary":"a","summary":"b"}`, target: m1, status: 400, code: invalid, msg: []string{"duplicate"}},
		{name: "field in upper case", method: "POST", path: "/v1/memories", body: `{"Content":"shouting"}`, status: 400, code: invalid, msg: []string{"unknown field", `"Content"`}},
		{name: "field in mixed case beside the real one", method: "POST", path: "/v1/memories", body: `{"content":"a","CATEGORY":"work"}`, status: 400, code: invalid, msg: []string{`"CATEGORY"`}},
		{name: "key write field case", method: "PUT", path: "/v1/keys/user/case", body: `{"content":"x","Source":"test"}`, status: 400, code: invalid, msg: []string{`"Source"`}},
		{name: "recall field case", method: "POST", path: "/v1/recall", body: `{"Query":"coffee","token_budget":100}`, status: 400, code: invalid, msg: []string{`"Query"`}},
		{name: "batch item field case", method: "POST", path: "/v1/memories/batch", body: `{"memories":[{"Content":"a"}]}`, status: 400, code: invalid, msg: []string{`"Content"`}},
		{name: "lone high surrogate", method: "POST", path: "/v1/memories", body: `{"content":"broken \ud800 text"}`, status: 400, code: invalid, msg: []string{"surrogate"}},
		{name: "lone low surrogate", method: "POST", path: "/v1/memories", body: `{"content":"broken \udc00"}`, status: 400, code: invalid, msg: []string{"surrogate"}},
		{name: "high surrogate before a letter", method: "POST", path: "/v1/memories", body: `{"content":"\ud83d\u0041"}`, status: 400, code: invalid, msg: []string{"surrogate"}},
		{name: "lone surrogate in a key", method: "PUT", path: "/v1/keys/user/surrogate", body: `{"content":{"t":"\udfff"},"source":"test"}`, status: 400, code: invalid, msg: []string{"surrogate"}},

		// --- query strings ---
		{name: "malformed query string", method: "GET", path: "/v1/memories?cursor=%%%x", raw: true, status: 400, code: invalid, msg: []string{"query string"}},
		{name: "malformed query string on a get", method: "GET", path: m1 + "?x=%zz", raw: true, status: 400, code: invalid, msg: []string{"query string"}},
		{name: "query parameter on a get", method: "GET", path: m1 + "?verbose=1", status: 400, code: invalid, msg: []string{`"verbose"`}},
		{name: "query parameter on a create", method: "POST", path: "/v1/memories?dry_run=true", body: `{"content":"not with a dry run"}`, status: 400, code: invalid, msg: []string{`"dry_run"`}},
		{name: "query parameter on a patch", method: "PATCH", path: m1 + "?force=1", body: `{"summary":"forced"}`, target: m1, status: 400, code: invalid, msg: []string{`"force"`}},
		{name: "query parameter on a key write", method: "PUT", path: "/v1/keys/user/q?x=1", body: okKey, status: 400, code: invalid, msg: []string{`"x"`}},
		{name: "query parameter on a recall", method: "POST", path: "/v1/recall?debug=1", body: `{"query":"coffee","token_budget":100}`, status: 400, code: invalid, msg: []string{`"debug"`}},
		{name: "query parameter on feedback", method: "POST", path: "/v1/feedback?x=1", body: `{"memory_id":"` + f.m1.ID + `","thumb":"up"}`, target: m1, status: 400, code: invalid, msg: []string{`"x"`}},

		// --- a patch that changes nothing ---
		{name: "empty patch", method: "PATCH", path: m1, body: `{}`, target: m1, status: 400, code: invalid, msg: []string{"no field"}},
		{name: "patch with only a version", method: "PATCH", path: m1, body: `{"version":2}`, target: m1, status: 400, code: invalid, msg: []string{"no field"}},

		// --- history paging ---
		{name: "history limit 0", method: "GET", path: m1 + "/history?limit=0", status: 400, code: invalid, msg: []string{"limit"}},
		{name: "history limit too large", method: "GET", path: m1 + "/history?limit=100000", status: 400, code: invalid, msg: []string{"limit"}},
		{name: "history cursor garbage", method: "GET", path: m1 + "/history?cursor=abc", status: 400, code: invalid, msg: []string{"cursor"}},
		{name: "history unknown parameter", method: "GET", path: m1 + "/history?page=2", status: 400, code: invalid, msg: []string{`"page"`}},
	}
}

// TestBadInput sends malformed, oversized, forged or conflicting requests
// and checks that each gets a precise 4xx in the one error shape and
// changes nothing that either tenant can observe.
func TestBadInput(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newBadFixture(t, engine)
		e := f.e
		alphaBefore, betaBefore := e.snapshot(t, f.alpha), e.snapshot(t, f.beta)
		for _, tc := range f.cases() {
			t.Run(tc.name, func(t *testing.T) {
				key := tc.key
				if key == "" {
					key = f.alpha
				}
				var targetBefore *response
				if tc.target != "" {
					targetBefore = e.do(t, "GET", tc.target, key, "")
					wantStatus(t, targetBefore, http.StatusOK)
				}
				r := f.send(t, tc, key)
				wantError(t, r, tc.status, tc.code, tc.msg...)
				if tc.target != "" {
					after := e.do(t, "GET", tc.target, key, "")
					sameSnapshot(t, "target "+tc.target, fmt.Sprint(targetBefore.Status, targetBefore.Header.Get("ETag"), string(targetBefore.Body)),
						fmt.Sprint(after.Status, after.Header.Get("ETag"), string(after.Body)))
				}
				// compare with the state just before this case, so that one
				// wrongly accepted request fails only its own case
				alphaAfter, betaAfter := e.snapshot(t, f.alpha), e.snapshot(t, f.beta)
				sameSnapshot(t, "alpha's memories", alphaBefore, alphaAfter)
				sameSnapshot(t, "beta's memories", betaBefore, betaAfter)
				alphaBefore, betaBefore = alphaAfter, betaAfter
			})
		}
	})
}

func (f *badFixture) send(t *testing.T, tc badCase, key string) *response {
	t.Helper()
	switch {
	case tc.raw:
		if len(tc.headers) > 0 {
			t.Fatal("raw requests take no extra headers")
		}
		return f.e.raw(t, tc.method, tc.path, key, tc.body)
	case tc.chunked:
		req := httptest.NewRequest(tc.method, tc.path, io.MultiReader(strings.NewReader(tc.body)))
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		setHeaders(req.Header, tc.headers)
		return f.e.serve(t, req)
	}
	return f.e.do(t, tc.method, tc.path, key, tc.body, tc.headers...)
}

// TestBadInputNamesTimeField: a wrong expires_at is a wrong type like any
// other and the message must name the field, as PATCH does.
func TestBadInputNamesTimeField(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		before := e.snapshot(t, alpha)
		for _, tc := range []struct{ name, method, path, body string }{
			{"POST expires_at tomorrow", "POST", "/v1/memories", `{"content":"x","expires_at":"tomorrow"}`},
			{"POST expires_at number", "POST", "/v1/memories", `{"content":"x","expires_at":5}`},
			{"PUT key expires_at tomorrow", "PUT", "/v1/keys/user/x", `{"content":"x","source":"t","expires_at":"tomorrow"}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(t, tc.method, tc.path, alpha, tc.body)
				wantError(t, r, http.StatusBadRequest, invalid, "expires_at")
				after := e.snapshot(t, alpha)
				sameSnapshot(t, "alpha's memories", before, after)
				before = after
			})
		}
	})
}

// TestAuthRequired: every /v1 endpoint refuses a missing, malformed,
// unknown or revoked key with 401 and WWW-Authenticate, before reading the
// body, and changes nothing.
func TestAuthRequired(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		revoked, revokedID := e.tenant(t, "alpha")
		m := create(t, e, alpha, `{"content":"The user prefers dark roast coffee"}`)
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+m.ID, alpha, `{"summary":"coffee"}`), http.StatusOK)
		wantStatus(t, e.do(t, "PUT", "/v1/keys/user/style", alpha, `{"content":"concise","source":"user"}`), http.StatusOK)
		// the key works until it is revoked
		wantStatus(t, e.do(t, "GET", "/v1/memories/"+m.ID, revoked, ""), http.StatusOK)
		if err := e.db.RevokeAPIKey(t.Context(), revokedID); err != nil {
			t.Fatal(err)
		}
		before := e.snapshot(t, alpha)

		endpoints := []struct{ method, path, body string }{
			{"POST", "/v1/memories", `{"content":"written without a key"}`},
			{"GET", "/v1/memories", ""},
			{"GET", "/v1/memories/" + m.ID, ""},
			{"PATCH", "/v1/memories/" + m.ID, `{"content":"changed without a key"}`},
			{"DELETE", "/v1/memories/" + m.ID, ""},
			{"GET", "/v1/memories/" + m.ID + "/history", ""},
			{"POST", "/v1/memories/" + m.ID + "/rollback", `{"version":1}`},
			{"PUT", "/v1/keys/user/style", `{"content":"changed","source":"x"}`},
			{"GET", "/v1/keys/user/style", ""},
			{"DELETE", "/v1/keys/user/style", ""},
		}
		creds := []struct {
			name   string
			header string // Authorization; "" sends none
		}{
			{"no header", ""},
			{"wrong key", "Bearer egk_" + strings.Repeat("a", 52)},
			{"revoked key", "Bearer " + revoked},
			{"basic scheme", "Basic " + base64.StdEncoding.EncodeToString([]byte("alpha:"+alpha))},
			{"key without scheme", alpha},
			{"empty bearer", "Bearer   "},
			{"key with suffix", "Bearer " + alpha + "x"},
		}
		for _, c := range creds {
			for _, ep := range endpoints {
				t.Run(c.name+"/"+ep.method+" "+strings.ReplaceAll(ep.path, m.ID, ":id"), func(t *testing.T) {
					r := e.do(t, ep.method, ep.path, "", ep.body, "Authorization", c.header)
					wantError(t, r, http.StatusUnauthorized, "unauthorized")
					if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer") {
						t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", r.Header.Get("WWW-Authenticate"))
					}
					if strings.Contains(string(r.Body), alpha) || strings.Contains(string(r.Body), revoked) {
						t.Errorf("401 body echoes the key: %s", r)
					}
					after := e.snapshot(t, alpha)
					sameSnapshot(t, "alpha's memories", before, after)
					before = after
				})
			}
		}
	})
}

// TestProvenanceOnEveryWritePath: the provenance rule (README "Provenance":
// keys under /kb/ and sources of kind web, tool or file must carry kind,
// name, retrieved_at and locator, else the write is refused with 400) holds
// on every path that writes a source, not only PUT /v1/keys and POST with
// a key.
func TestProvenanceOnEveryWritePath(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		r := e.do(t, "PUT", "/v1/keys/kb/go/maps", alpha, `{"content":"Go maps are not safe for concurrent writes",
			"source":{"kind":"web","name":"go.dev","retrieved_at":"2025-01-02T03:04:05Z","locator":{"url":"https://go.dev/doc"}}}`)
		wantStatus(t, r, http.StatusOK)
		kb := "/v1/memories/" + r.memory(t).ID
		r = e.do(t, "PUT", "/v1/keys/notes/web", alpha, `{"content":"a note","source":"user"}`)
		wantStatus(t, r, http.StatusOK)
		note := "/v1/memories/" + r.memory(t).ID
		before := e.snapshot(t, alpha)
		for _, tc := range []struct {
			name, method, path, body string
			msg                      []string
		}{
			{"PATCH kb source to a string", "PATCH", kb, `{"source":"manual"}`, []string{"kind", "retrieved_at", "locator"}},
			{"PATCH kb source to null", "PATCH", kb, `{"source":null}`, []string{"source"}},
			{"PATCH kb source lacking provenance", "PATCH", kb, `{"source":{"kind":"web","name":"x"}}`, []string{"retrieved_at, locator"}},
			{"PATCH key source to null", "PATCH", note, `{"source":null}`, []string{"source is required"}},
			{"PATCH key web source lacking provenance", "PATCH", note, `{"source":{"kind":"web","name":"x"}}`, []string{"retrieved_at, locator"}},
			{"POST web source lacking provenance", "POST", "/v1/memories", `{"content":"from the web","source":{"kind":"web","name":"x"}}`, []string{"retrieved_at, locator"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(t, tc.method, tc.path, alpha, tc.body)
				if r.Status < 400 {
					t.Errorf("%s %s %s accepted: %s", tc.method, tc.path, tc.body, r)
				} else {
					wantError(t, r, http.StatusBadRequest, invalid, tc.msg...)
				}
				after := e.snapshot(t, alpha)
				sameSnapshot(t, "alpha's memories", before, after)
				before = after
			})
		}
	})
}

// TestBodyWithoutContentType: README "bodies need Content-Type:
// application/json"; a body without one is refused with 415 like a
// body with another type, and writes nothing.
func TestBodyWithoutContentType(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		m := create(t, e, alpha, `{"content":"The user prefers dark roast coffee"}`)
		wantStatus(t, e.do(t, "PATCH", "/v1/memories/"+m.ID, alpha, `{"summary":"coffee"}`), http.StatusOK)
		before := e.snapshot(t, alpha)
		for _, tc := range []struct{ method, path, body string }{
			{"POST", "/v1/memories", `{"content":"sent without a content type"}`},
			{"PATCH", "/v1/memories/" + m.ID, `{"content":"changed without a content type"}`},
			{"POST", "/v1/memories/" + m.ID + "/rollback", `{"version":1}`},
			{"PUT", "/v1/keys/user/style", `{"content":"x","source":"test"}`},
		} {
			t.Run(tc.method+" "+strings.ReplaceAll(tc.path, m.ID, ":id"), func(t *testing.T) {
				r := e.do(t, tc.method, tc.path, alpha, tc.body, "Content-Type", "")
				if r.Status < 400 {
					t.Errorf("body without Content-Type accepted: %s", r)
				} else {
					wantError(t, r, http.StatusUnsupportedMediaType, "unsupported", "application/json")
				}
				after := e.snapshot(t, alpha)
				sameSnapshot(t, "alpha's memories", before, after)
				before = after
			})
		}
	})
}

// TestStrictJSONAccepts: the strict decoder refuses only what it must;
// bodies at the limits, brackets and escapes inside strings, and a
// charset parameter are accepted.
func TestStrictJSONAccepts(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, engine)
		alpha, _ := e.tenant(t, "alpha")
		atLimit := strings.Repeat("é ", 16384) // 32,768 characters, 49,152 bytes: the limit counts characters
		for _, tc := range []struct {
			name, body string
			headers    []string
		}{
			{"brackets in a string", `{"content":"` + strings.Repeat("[{", 100) + `"}`, nil},
			{"escaped quotes and backslashes", `{"content":"say \"[\" and \\ then {"}`, nil},
			{"unicode escapes", `{"content":"caf\u00e9 \ud83d\ude00 \u4e2d\u6587"}`, nil},
			{"escaped surrogate pair, upper-case hex", `{"content":"pair \uD83D\uDE00 ok"}`, nil},
			{"free data with one of each key", `{"content":"data keys","data":{"a":{"a":1},"b":[{"a":1},{"a":2}]}}`, nil},
			{"depth exactly 32", `{"content":"deep data","data":` + nested(31) + `}`, nil},
			{"content at the character limit", `{"content":"` + atLimit + `"}`, nil},
			{"32 tags", mustJSON(map[string]any{"content": "many tags", "tags": tagList(32)}), nil},
			{"charset parameter", `{"content":"with a charset"}`, []string{"Content-Type", "application/json; charset=utf-8"}},
			{"upper-case media type", `{"content":"upper-case type"}`, []string{"Content-Type", "Application/JSON"}},
			{"surrounding white space", " \n\t{\"content\":\"white space around\"}\n ", nil},
			{"body just under the limit", `{"content":"under the limit","data":"` + strings.Repeat("d", 100000) + `"}`, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(t, "POST", "/v1/memories", alpha, tc.body, tc.headers...)
				wantStatus(t, r, http.StatusCreated)
			})
		}
	})
}

func tagList(n int) []string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = "tag" + strings.Repeat("x", i)
	}
	return tags
}
