package mcp_test

import (
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// TestRememberEmotion: remember stores a given emotion, estimates one
// when none is given, changes it by id, and refuses one outside 0–1.
func TestRememberEmotion(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		c := connect(t, key(t, e.db, "acme"), e.srv.URL)
		emotion := func(r map[string]any) float64 { return r["memory"].(map[string]any)["emotion"].(float64) }
		r := c.Call(t, "remember", map[string]any{"content": "Our first sailing trip together", "category": "life", "emotion": 0.8})
		if emotion(r) != 0.8 {
			t.Fatalf("given: %v", r)
		}
		id := r["memory"].(map[string]any)["id"].(string)
		if r := c.Call(t, "remember", map[string]any{"content": "我非常讨厌下雨天！", "category": "life"}); !(emotion(r) > 0.3) {
			t.Fatalf("estimated: %v", r)
		}
		if r := c.Call(t, "remember", map[string]any{"id": id, "emotion": 0.1}); emotion(r) != 0.1 {
			t.Fatalf("changed: %v", r)
		}
		for _, bad := range []any{1.2, -1, "much"} {
			if code, _ := c.CallError(t, "remember", map[string]any{"content": "x", "category": "life", "emotion": bad}); code != "invalid" {
				t.Errorf("emotion %v: code %q", bad, code)
			}
		}
	})
}
