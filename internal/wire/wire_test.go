package wire_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

type item struct {
	Content string          `json:"content"`
	AgentID *string         `json:"agent_id"`
	Data    json.RawMessage `json:"data"`
}

type request struct {
	Query     string `json:"query"`
	SessionID string `json:"session_id"`
	Items     []item `json:"items"`
}

// TestDecode: each rule of the strict decoder, with the message a client
// sees.
func TestDecode(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"query":"a","query":"b"}`, `duplicate field "query"`},
		{`{"items":[{"data":{"x":1,"x":2}}]}`, `duplicate field "x"`},
		{`{"Query":"a"}`, `unknown field "Query" (field names are case-sensitive: "query")`},
		{`{"items":[{"CONTENT":"a"}]}`, `unknown field "CONTENT" (field names are case-sensitive: "content")`},
		{`{"query":"\ud800"}`, `lone UTF-16 surrogate (\ud800)`},
		{`{"query":"\udc00\ud800"}`, `lone UTF-16 surrogate (\udc00)`},
		{`{"query":"a\u0000"}`, `NUL`},
		{`{"items":` + strings.Repeat("[", 5) + strings.Repeat("]", 5) + `}`, `nested deeper than 4 levels`},
		{`{"colour":"red"}`, `unknown field "colour"`},
		{`{"query":5}`, `query: want a string, got number`},
		{`{"query":"a"} {}`, `after the JSON object`},
		{`[]`, `must be a JSON object`},
		{` `, `request body is empty`},
		{"{\"query\":\"\xff\"}", `not valid UTF-8`},
		{`{"session_id":"../x"}`, `session_id must be 1-128 characters`},
		{`{"items":[{"content":"a","agent_id":"a b"}]}`, `agent_id must be 1-128 characters`},
	} {
		var r request
		err := wire.Decode([]byte(tc.body), &r, 4)
		if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), tc.want) {
			t.Errorf("Decode(%s) = %v, want invalid %q", tc.body, err, tc.want)
		}
	}
	var r request
	if err := wire.Decode([]byte(`{"query":"😀 \ud83d\ude00","session_id":"s-1","items":[{"content":"a","agent_id":"ada","data":{"a":1}}]}`), &r, 4); err != nil {
		t.Fatalf("a valid body: %v", err)
	}
	if r.Query != "😀 😀" || *r.Items[0].AgentID != "ada" {
		t.Errorf("decoded %+v", r)
	}
}

// TestCheckDocument: free JSON refuses a field named twice at any depth.
func TestCheckDocument(t *testing.T) {
	for _, body := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":1}]}}`, `{"a":1} x`, `{"a":"\ud800"}`} {
		if err := wire.CheckDocument([]byte(body), 32); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("CheckDocument(%s) = %v, want invalid", body, err)
		}
	}
	if err := wire.CheckDocument([]byte(`{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}`), 32); err != nil {
		t.Errorf("a valid document: %v", err)
	}
}

// TestStatus: the one table, for every code the root package defines.
func TestStatus(t *testing.T) {
	for code, want := range map[string]int{
		engram.EINVALID: 400, engram.EUNAUTHORIZED: 401, engram.ENOTFOUND: 404, engram.ECONFLICT: 409,
		engram.ETOOLARGE: 413, engram.EUNSUPPORTED: 415, engram.EUNPROCESSABLE: 422, engram.EQUOTA: 403,
		engram.ERATELIMITED: 429, engram.EINTERNAL: 500, wire.EMETHOD: 405, wire.EFORBIDDEN: 403,
	} {
		if got, shown := wire.Status(engram.Errorf(code, "x")); got != want || shown != code {
			t.Errorf("Status(%s) = %d %s, want %d", code, got, shown, want)
		}
	}
	if got, shown := wire.Status(engram.Errorf("made_up", "secret detail")); got != 500 || shown != engram.EINTERNAL {
		t.Errorf("unknown code: %d %s", got, shown)
	}
	if b := string(wire.ErrorBody(engram.Errorf("made_up", "secret detail"))); b != `{"error":{"code":"internal","message":"internal error"}}` {
		t.Errorf("unknown code body: %s", b)
	}
	if b := string(wire.ErrorBody(engram.Errorf(engram.ETOOLARGE, "too big"))); b != `{"error":{"code":"too_large","message":"too big"}}` {
		t.Errorf("body: %s", b)
	}
}

// TestPathKey: an encoded slash is refused; other escapes decode before
// the key rules apply.
func TestPathKey(t *testing.T) {
	lim := engram.DefaultLimitsConfig().KeyLimits()
	for _, p := range []string{"/v1/keys/a%2Fb", "/v1/keys/a%2fb", "/v1/keys/a/%2e%2e/b", "/v1/keys/a%00", "/v1/keys/"} {
		if _, err := wire.PathKey(p, "/v1/keys", lim); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("PathKey(%s) = %v, want invalid", p, err)
		}
	}
	if k, err := wire.PathKey("/v1/keys/user/caf%C3%A9%20noir", "/v1/keys", lim); err != nil || k != "/user/café noir" {
		t.Errorf("PathKey = %q, %v", k, err)
	}
}

// TestReadBody: a body over the limit is a 413, announced or not.
func TestReadBody(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 11)))
		if chunked {
			r.ContentLength = -1
		}
		_, err := wire.ReadBody(httptest.NewRecorder(), r, 10)
		if status, _ := wire.Status(err); status != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked %v: %v", chunked, err)
		}
	}
}
