package mcp_test

import (
	"context"
	"testing"

	"github.com/engram-memory/engram"

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

// TestRememberQuarantine: a tenant whose own gate is on in quarantine
// mode has remember store a failing note quarantined, which recall does
// not bring; set_memory is still refused; another tenant is not gated.
func TestRememberQuarantine(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		e := newEnv(t, db)
		c := connect(t, key(t, db, "acme"), e.srv.URL)
		other := connect(t, key(t, db, "other"), e.srv.URL)
		on, mode := "on", engram.GateQuarantine
		if _, err := db.UpdateTenant(context.Background(), "acme", engram.TenantUpdate{Gate: &on, GateMode: &mode}); err != nil {
			t.Fatal(err)
		}
		r := c.Call(t, "remember", map[string]any{"content": "Thanks, sounds good!", "category": "life"})
		if m := r["memory"].(map[string]any); m["quarantined"] != true {
			t.Fatalf("remember: %v", r)
		}
		if r := c.Call(t, "recall", map[string]any{"query": "thanks sounds good"}); len(r["items"].([]any)) != 0 {
			t.Fatalf("recall brought a quarantined memory: %v", r["items"])
		}
		if code, _ := c.CallError(t, "set_memory", map[string]any{"key": "/user/mood", "content": "ok thanks!", "source": "chat"}); code != "unprocessable" {
			t.Errorf("set_memory: %q", code)
		}
		if r := other.Call(t, "remember", map[string]any{"content": "Thanks, sounds good!", "category": "life"}); r["memory"].(map[string]any)["quarantined"] != nil {
			t.Fatalf("another tenant is not gated: %v", r)
		}
	})
}
