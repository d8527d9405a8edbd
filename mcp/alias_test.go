package mcp_test

import (
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// TestAliasTool: alias makes an alias, set_memory and forget act through
// it on the target, remove takes it away; bad input is a tool error with
// the REST code that changes nothing.
func TestAliasTool(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		c := connect(t, key(t, e.db, "acme"), e.srv.URL)
		r := c.Call(t, "set_memory", map[string]any{"key": "/user/pet", "content": "a grey cat called Dumpling", "source": "chat", "user_id": "ann"})
		pet := r["memory"].(map[string]any)["id"].(string)
		r = c.Call(t, "alias", map[string]any{"alias": "/user/猫", "key": "/user/pet", "user_id": "ann"})
		if a := r["alias"].(map[string]any); a["memory_id"] != pet || a["key"] != "/user/pet" || len(r["aliases"].([]any)) != 1 {
			t.Fatalf("alias: %v", r)
		}
		for _, bad := range []struct {
			args map[string]any
			code string
		}{
			{map[string]any{"alias": "/user/x", "user_id": "ann"}, "invalid"},
			{map[string]any{"alias": "user/x", "key": "/user/pet", "user_id": "ann"}, "invalid"},
			{map[string]any{"alias": "/user/x", "key": "/user/pet"}, "not_found"},
			{map[string]any{"alias": "/user/x", "key": "/user/猫", "user_id": "ann"}, "conflict"},
			{map[string]any{"alias": "/user/x", "remove": true, "user_id": "ann"}, "not_found"},
			{map[string]any{"alias": "/user/x", "key": "/user/pet", "user_id": "ann", "weight": 2}, "invalid"},
		} {
			if code, _ := c.CallError(t, "alias", bad.args); code != bad.code {
				t.Errorf("%v: code %q, want %q", bad.args, code, bad.code)
			}
		}
		r = c.Call(t, "set_memory", map[string]any{"key": "/user/猫", "content": "Dumpling only eats salmon kibble", "source": "chat", "user_id": "ann"})
		if m := r["memory"].(map[string]any); m["id"] != pet || m["key"] != "/user/pet" {
			t.Fatalf("set_memory through the alias: %v", r)
		}
		r = c.Call(t, "forget", map[string]any{"key": "/user/猫", "user_id": "ann"})
		if m := r["memory"].(map[string]any); m["id"] != pet {
			t.Fatalf("forget through the alias: %v", r)
		}
		r = c.Call(t, "alias", map[string]any{"alias": "/user/猫", "remove": true, "user_id": "ann"})
		if a := r["alias"].(map[string]any); a["alias"] != "/user/猫" || len(r["aliases"].([]any)) != 0 {
			t.Fatalf("remove: %v", r)
		}
	})
}
