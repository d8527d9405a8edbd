package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// call is one JSON-RPC tools/call of tool with args, raw JSON as sent.
func call(id int, tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args)
}

// postMCP posts body to /mcp as an MCP 2025-03-26 client would (the last
// version with JSON-RPC batches) and returns the status and the body.
func postMCP(t testing.TB, e *env, key, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// mcpRefusal is the code and message of a refused MCP request: the
// HTTP error body of a request refused whole, or the tool error of the
// one call it carried.
func mcpRefusal(t testing.TB, status int, body []byte) (code, msg string) {
	t.Helper()
	var eb errorBody
	if status != http.StatusOK {
		if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code == "" {
			t.Fatalf("MCP answered %d %.300s, not the REST error body", status, body)
		}
		return eb.Error.Code, eb.Error.Message
	}
	var res struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &res); err != nil || !res.Result.IsError || len(res.Result.Content) != 1 {
		t.Fatalf("MCP answered %d %.300s, not a tool error", status, body)
	}
	if err := json.Unmarshal([]byte(res.Result.Content[0].Text), &eb); err != nil || eb.Error.Code == "" {
		t.Fatalf("tool error %q is not the REST error body", res.Result.Content[0].Text)
	}
	return eb.Error.Code, eb.Error.Message
}

// TestDoorParity sends one table of bad inputs through REST and through
// MCP over HTTP, as raw bytes (the SDK's client would clean some of them),
// and expects the same refusal, code and message, from both, and nothing
// written by either.
func TestDoorParity(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		k := key(t, e.db, "acme")
		deep := strings.Repeat("[", 40) + strings.Repeat("]", 40)
		big := `{"content":"` + strings.Repeat("a", 1<<20) + `"}`
		for _, tc := range []struct {
			name           string
			method, path   string
			body           string // the REST body, and the tool's arguments unless mcp is set
			tool           string
			mcp            string // the whole MCP request body, when not one call of tool with body
			status         int
			code, contains string
		}{
			{name: "duplicate field", method: "POST", path: "/v1/memories", body: `{"content":"a","content":"b"}`, tool: "remember",
				status: 400, code: "invalid", contains: `duplicate field "content"`},
			{name: "case-folded field", method: "POST", path: "/v1/memories", body: `{"Content":"a"}`, tool: "remember",
				status: 400, code: "invalid", contains: `unknown field "Content" (field names are case-sensitive: "content")`},
			{name: "lone surrogate", method: "POST", path: "/v1/memories", body: `{"content":"broken \ud800 text"}`, tool: "remember",
				status: 400, code: "invalid", contains: "lone UTF-16 surrogate"},
			{name: "NUL", method: "POST", path: "/v1/memories", body: `{"content":"a\u0000b"}`, tool: "remember",
				status: 400, code: "invalid", contains: "NUL"},
			{name: "too deep", method: "POST", path: "/v1/memories", body: `{"content":"x","source":` + deep + `}`, tool: "remember",
				status: 400, code: "invalid", contains: "nested deeper than 32 levels"},
			{name: "unknown field", method: "POST", path: "/v1/memories", body: `{"content":"x","colour":"red"}`, tool: "remember",
				status: 400, code: "invalid", contains: `unknown field "colour"`},
			{name: "wrong type", method: "POST", path: "/v1/memories", body: `{"content":5}`, tool: "remember",
				status: 400, code: "invalid", contains: "content: want a string, got number"},
			{name: "trailing data", method: "POST", path: "/v1/memories", body: `{"content":"x"} {"content":"y"}`,
				mcp: call(1, "remember", `{"content":"x"}`) + ` {"content":"y"}`, status: 400, code: "invalid", contains: "after the JSON object"},
			{name: "bad session id", method: "POST", path: "/v1/recall", body: `{"query":"tea","token_budget":100,"session_id":"../x"}`, tool: "recall",
				status: 400, code: "invalid", contains: "session_id must be 1-128 characters"},
			{name: "bad agent id", method: "POST", path: "/v1/memories", body: `{"content":"x","agent_id":"a/b"}`, tool: "remember",
				status: 400, code: "invalid", contains: "agent_id must be 1-128 characters"},
			{name: "bad key", method: "POST", path: "/v1/memories", body: `{"content":"x","key":"/a/../b","source":"t"}`,
				mcp: call(1, "set_memory", `{"key":"/a/../b","content":"x","source":"t"}`), status: 400, code: "invalid", contains: `key segment ".." is not allowed`},
			{name: "duplicate key in a batch", method: "POST", path: "/v1/memories/batch",
				body:   `{"memories":[{"content":"a","key":"/k/one","source":"t"},{"content":"b","key":"/k/one","source":"t"}]}`,
				mcp:    "[" + call(1, "set_memory", `{"key":"/k/one","content":"a","source":"t"}`) + "," + call(2, "set_memory", `{"key":"/k/one","content":"b","source":"t"}`) + "]",
				status: 400, code: "invalid", contains: `batch items 0 and 1 both name key "/k/one"`},
			{name: "too large", method: "POST", path: "/v1/memories", body: big, tool: "remember",
				status: 413, code: "too_large", contains: "request body is larger than 1048576 bytes"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, body := rest(t, e, k, tc.method, tc.path, tc.body)
				var eb errorBody
				if err := json.Unmarshal([]byte(body), &eb); err != nil || status != tc.status || eb.Error.Code != tc.code ||
					!strings.Contains(eb.Error.Message, tc.contains) {
					t.Fatalf("REST: %d %.300s, want %d %s %q", status, body, tc.status, tc.code, tc.contains)
				}
				req := tc.mcp
				if req == "" {
					req = call(1, tc.tool, tc.body)
				}
				mstatus, mbody := postMCP(t, e, k, req)
				code, msg := mcpRefusal(t, mstatus, mbody)
				if code != eb.Error.Code || msg != eb.Error.Message {
					t.Errorf("REST refuses with %s %q, MCP with %s %q", eb.Error.Code, eb.Error.Message, code, msg)
				}
			})
		}
		if status, body := rest(t, e, k, "GET", "/v1/memories?include_deleted=true", ""); status != http.StatusOK || body != `{"items":[]}` {
			t.Fatalf("after refused requests: %d %s", status, body)
		}
	})
}

// TestJSONRPCBatches: a JSON-RPC batch on /mcp is held to limits.max_batch
// messages, as REST's batch is held to limits.max_batch memories: one
// over is refused whole and writes nothing; a batch within the limit runs
// every call.
func TestJSONRPCBatches(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		k := key(t, e.db, "acme")
		calls := make([]string, 101)
		for i := range calls {
			calls[i] = call(i+1, "remember", fmt.Sprintf(`{"content":"batch memory %d"}`, i))
		}
		status, body := postMCP(t, e, k, "["+strings.Join(calls, ",")+"]")
		if code, msg := mcpRefusal(t, status, body); status != http.StatusBadRequest || code != "invalid" ||
			msg != "a JSON-RPC batch may hold at most 100 messages, got 101" {
			t.Fatalf("batch of 101: %d %s %q", status, code, msg)
		}
		if status, body := rest(t, e, k, "GET", "/v1/memories?include_deleted=true", ""); status != http.StatusOK || body != `{"items":[]}` {
			t.Fatalf("after a refused batch: %d %s", status, body)
		}
		status, body = postMCP(t, e, k, "["+strings.Join(calls[:3], ",")+"]")
		var answers []struct {
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &answers); status != http.StatusOK || err != nil || len(answers) != 3 {
			t.Fatalf("batch of 3: %d %.500s", status, body)
		}
		for i, a := range answers {
			if a.Result.IsError {
				t.Errorf("batch of 3, call %d: %s", i, body)
			}
		}
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		_, list := rest(t, e, k, "GET", "/v1/memories", "")
		if err := json.Unmarshal([]byte(list), &page); err != nil || len(page.Items) != 3 {
			t.Fatalf("after a batch of 3: %s", list)
		}
	})
}
