package mcp_test

import (
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// TestRecallConcepts: through MCP, a question asked by category recalls
// the memory that names a member of it, whose item names the category and
// the member in "concept", in English and Chinese.
func TestRecallConcepts(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		c := connect(t, key(t, e.db, "acme"), e.srv.URL)
		id := func(r map[string]any) string { return r["memory"].(map[string]any)["id"].(string) }
		for _, tc := range []struct{ memory, query, category, term string }{
			{"I went swimming with the kids on Sunday", "What activities do I enjoy?", "activities", "swim"},
			{"我周末去游泳了", "我有什么爱好？", "爱好", "游泳"},
		} {
			want := id(c.Call(t, "remember", map[string]any{"content": tc.memory, "category": "life"}))
			c.Call(t, "remember", map[string]any{"content": "The quarterly report is due Friday 季度报告", "category": "work"})
			r := c.Call(t, "recall", map[string]any{"query": tc.query, "token_budget": 500, "fill": true})
			var concept map[string]any
			for _, it := range r["items"].([]any) {
				if item := it.(map[string]any); item["id"] == want {
					concept, _ = item["concept"].(map[string]any)
				}
			}
			if concept["category"] != tc.category || concept["term"] != tc.term {
				t.Fatalf("%q: want %q with concept %s/%s: %v", tc.query, tc.memory, tc.category, tc.term, r["items"])
			}
		}
	})
}
