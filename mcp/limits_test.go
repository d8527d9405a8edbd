package mcp_test

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// TestQuotasMatchREST: past the tenant's memories quota the MCP tools
// that write memories (remember, set_memory, session_event with a
// message) refuse as REST does, quota_exceeded with the same message,
// and write nothing.
func TestQuotasMatchREST(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.Quotas = store.Quotas{Memories: 1}
		e := newEnv(t, storetest.OpenWith(t, o))
		k := key(t, e.db, "acme")
		c := connect(t, k, e.srv.URL)
		c.Call(t, "remember", map[string]any{"content": "the only one", "category": "work"})
		status, body := rest(t, e, k, "POST", "/v1/memories", `{"content":"x"}`)
		if status != 403 {
			t.Fatalf("REST past the quota: %d %s", status, body)
		}
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"remember", map[string]any{"content": "x"}},
			{"set_memory", map[string]any{"key": "/user/name", "content": "Ada", "source": "chat"}},
			{"session_event", map[string]any{"session_id": "s", "type": "message", "role": "user", "content": "x"}},
		} {
			code, msg := c.CallError(t, tc.tool, tc.args)
			want := `{"error":{"code":"` + code + `","message":` + quote(msg) + `}}`
			if code != engram.EQUOTA || want != body {
				t.Errorf("%s: %s %q, REST said %s", tc.tool, code, msg, body)
			}
		}
		ctx := storetest.Tenant(t, e.db, "acme")
		page, err := e.db.FindMemories(ctx, engram.MemoryFilter{IncludeInvalid: true})
		if err != nil || len(page.Items) != 1 {
			t.Errorf("memories after refusals: %d %v", len(page.Items), err)
		}
		if _, err := e.db.FindSession(ctx, "s"); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("a refused session_event created its session: %v", err)
		}
	})
}
