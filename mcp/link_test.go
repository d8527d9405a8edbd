package mcp_test

import (
	"strings"
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// TestLinkTool: link makes a link and lists from's links, remove unlinks;
// bad input is a tool error with the REST code that changes nothing.
func TestLinkTool(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		c := connect(t, key(t, e.db, "acme"), e.srv.URL)
		id := func(content string) string {
			r := c.Call(t, "remember", map[string]any{"content": content, "category": "life"})
			return r["memory"].(map[string]any)["id"].(string)
		}
		cat, food := id("We adopted a grey cat called Dumpling"), id("She only eats salmon kibble")
		r := c.Call(t, "link", map[string]any{"from": food, "to": cat, "relation": "mentions"})
		if l := r["link"].(map[string]any); l["relation"] != "mentions" || l["to"] != cat || len(r["links"].([]any)) != 1 {
			t.Fatalf("link: %v", r)
		}
		for _, bad := range []struct {
			args map[string]any
			code string
		}{
			{map[string]any{"from": food}, "invalid"},
			{map[string]any{"from": food, "to": food}, "invalid"},
			{map[string]any{"from": food, "to": cat, "relation": "a/b"}, "invalid"},
			{map[string]any{"from": food, "to": "mem_nope"}, "not_found"},
			{map[string]any{"from": food, "to": cat, "remove": true, "relation": "supports"}, "not_found"},
			{map[string]any{"from": food, "to": cat, "weight": 2}, "invalid"},
		} {
			if code, _ := c.CallError(t, "link", bad.args); code != bad.code {
				t.Errorf("%v: code %q, want %q", bad.args, code, bad.code)
			}
		}
		// Recall and prompt with hops bring the linked turn, marked via.
		r = c.Call(t, "recall", map[string]any{"query": "what does Dumpling have for dinner", "hops": 1})
		found := false
		for _, it := range r["items"].([]any) {
			it := it.(map[string]any)
			if it["id"] == food {
				via, _ := it["via"].(map[string]any)
				found = via["from"] == cat && via["relation"] == "mentions"
			}
		}
		if !found {
			t.Fatalf("recall with hops: %v", r["items"])
		}
		if p := c.Call(t, "prompt", map[string]any{"query": "what does Dumpling have for dinner", "hops": 1}); !strings.Contains(p["context"].(string), "salmon kibble") {
			t.Fatalf("prompt with hops: %v", p["context"])
		}
		if p := c.Call(t, "prompt", map[string]any{"query": "what does Dumpling have for dinner"}); strings.Contains(p["context"].(string), "salmon kibble") {
			t.Fatalf("prompt without hops: %v", p["context"])
		}
		if code, _ := c.CallError(t, "recall", map[string]any{"query": "cat", "hops": 3}); code != "invalid" {
			t.Errorf("hops 3: %q", code)
		}
		r = c.Call(t, "link", map[string]any{"from": food, "to": cat, "remove": true})
		if len(r["removed"].([]any)) != 1 || len(r["links"].([]any)) != 0 {
			t.Fatalf("unlink: %v", r)
		}
	})
}

// TestHopsForUser: a recall for an end user follows links to that user's
// own memories (the hop reads the call's user, as every other read does).
func TestHopsForUser(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		c := connect(t, key(t, e.db, "acme"), e.srv.URL)
		id := func(content string) string {
			r := c.Call(t, "remember", map[string]any{"content": content, "category": "life", "user_id": "ann"})
			return r["memory"].(map[string]any)["id"].(string)
		}
		cat, food := id("We adopted a grey cat called Dumpling"), id("She only eats salmon kibble")
		c.Call(t, "link", map[string]any{"from": food, "to": cat, "relation": "mentions"})
		r := c.Call(t, "recall", map[string]any{"query": "what does Dumpling have for dinner", "hops": 1, "user_id": "ann"})
		for _, it := range r["items"].([]any) {
			if it.(map[string]any)["id"] == food {
				return
			}
		}
		t.Fatalf("ann's recall with hops: %v", r["items"])
	})
}
