package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/engram-memory/engram/mcp"
	"github.com/engram-memory/engram/store/storetest"
)

// TestStdioBatches: over stdio, as over HTTP, a JSON-RPC batch of more
// than limits.max_batch messages, or naming one key twice, gets one
// JSON-RPC error and runs none of its calls; the session goes on.
// (The stdio transport carries one message or batch per line.)
func TestStdioBatches(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	tenant, err := db.EnsureTenant(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- e.tools.RunStdio(context.Background(), mcp.Identity{TenantID: tenant.ID}, sr, sw) }()
	out := bufio.NewReader(cr)
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(cw, line+"\n"); err != nil {
			t.Fatal(err)
		}
		got, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Fatalf("answer %.300s: %v", got, err)
		}
		return v
	}
	v := send(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if v["id"] != float64(7) || v["result"] == nil {
		t.Fatalf("initialize: %v", v)
	}
	if _, err := io.WriteString(cw, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	calls := make([]string, 101)
	for i := range calls {
		calls[i] = call(i+1, "remember", fmt.Sprintf(`{"content":"stdio batch memory %d"}`, i))
	}
	twice := "[" + call(1, "set_memory", `{"key":"/k","content":"a","source":"t"}`) + "," + call(2, "forget", `{"key":"/k"}`) + "]"
	for _, tc := range []struct{ line, want string }{
		{"[" + strings.Join(calls, ",") + "]", "a JSON-RPC batch may hold at most 100 messages, got 101"},
		{twice, `batch items 0 and 1 both name key "/k"; a batch may name a key once`},
	} {
		v = send(tc.line)
		rpcErr, _ := v["error"].(map[string]any)
		if v["id"] != nil || rpcErr["code"] != float64(-32600) || rpcErr["message"] != tc.want {
			t.Errorf("answer %v, want error -32600 %q", v, tc.want)
		}
	}
	// The session goes on: a call is answered.
	v = send(call(8, "remember", `{"content":"after the refused batches"}`))
	if res, _ := v["result"].(map[string]any); v["id"] != float64(8) || res == nil || res["isError"] == true {
		t.Errorf("a call after refused batches: %v", v)
	}
	_ = cw.Close()
	if err := <-done; err != nil && err != io.EOF {
		t.Logf("RunStdio: %v", err)
	}
	var page struct {
		Items []struct {
			Content string `json:"content"`
		} `json:"items"`
	}
	_, body := rest(t, e, key(t, db, "acme"), "GET", "/v1/memories?include_deleted=true", "")
	if err := json.Unmarshal([]byte(body), &page); err != nil || len(page.Items) != 1 || page.Items[0].Content != "after the refused batches" {
		t.Fatalf("after refused batches: %.500s", body)
	}
}
