package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/mcp"
	"github.com/engram-memory/engram/store/storetest"
)

// TestStdioUser: a stdio session started for an end user (auth.user_id,
// ENGRAM_USER_ID) writes and reads as that user when a call names none; a
// call's user_id wins; a bad one is a tool error. On both engines.
func TestStdioUser(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		e := newEnv(t, db)
		tenant, err := db.EnsureTenant(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- e.tools.RunStdio(context.Background(), mcp.Identity{TenantID: tenant.ID, UserID: "ann"}, sr, sw)
		}()
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
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if _, err := io.WriteString(cw, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		result := func(v map[string]any) map[string]any {
			t.Helper()
			res, _ := v["result"].(map[string]any)
			if res == nil || res["isError"] == true {
				t.Fatalf("call failed: %v", v)
			}
			sc, _ := res["structuredContent"].(map[string]any)
			return sc
		}
		result(send(call(2, "remember", `{"content":"The ocelot lives in ann's garden","category":"life"}`)))
		result(send(call(3, "remember", `{"content":"The ocelot visits bob's garden","category":"life","user_id":"bob"}`)))
		rec := result(send(call(4, "recall", `{"query":"ocelot garden","fill":true}`)))
		b, _ := json.Marshal(rec)
		if s := string(b); !strings.Contains(s, "ann's garden") || strings.Contains(s, "bob's garden") {
			t.Errorf("recall as ann: %s", s)
		}
		rec = result(send(call(5, "recall", `{"query":"ocelot garden","fill":true,"user_id":"bob"}`)))
		b, _ = json.Marshal(rec)
		if s := string(b); strings.Contains(s, "ann's garden") || !strings.Contains(s, "bob's garden") {
			t.Errorf("recall as bob: %s", s)
		}
		v := send(call(6, "recall", `{"query":"ocelot","user_id":"../x"}`))
		if res, _ := v["result"].(map[string]any); res == nil || res["isError"] != true {
			t.Errorf("a bad user_id must be a tool error: %v", v)
		}
		_ = cw.Close()
		<-done
		annID := "ann"
		page, err := db.FindMemories(engram.NewContextWithTenant(context.Background(), tenant.ID), engram.MemoryFilter{UserID: &annID, Limit: 10})
		if err != nil || len(page.Items) != 1 {
			t.Errorf("ann's memories: %+v %v", page, err)
		}
	})
}
