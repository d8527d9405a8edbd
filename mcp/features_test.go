package mcp_test

import (
	"fmt"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestRecallNamesFeatures: through MCP, as through REST
// (TestFeatureModelHTTP), answers resting on keyword lists go wrong and
// those resting on sentences go well; the recall of an unjudged keyword
// list names the list shape among the at most three kinds that moved its
// score, with a negative weight.
func TestRecallNamesFeatures(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		c := connect(t, key(t, e.db, "acme"), e.srv.URL)
		remember := func(content string) string {
			return c.Call(t, "remember", map[string]any{"content": content, "category": "life", "source": "chat"})["memory"].(map[string]any)["id"].(string)
		}
		judge := func(content, query, thumb, rater string) {
			id := remember(content)
			r := c.Call(t, "recall", map[string]any{"query": query, "token_budget": 50})
			if items := r["items"].([]any); len(items) == 0 || items[0].(map[string]any)["id"] != id {
				t.Fatalf("recall %q: %v, want %s first", query, r["items"], id)
			}
			c.Call(t, "feedback", map[string]any{"recall_id": r["recall_id"], "thumb": thumb, "rater": rater})
		}
		for i := range 30 {
			topic := fmt.Sprintf("zq%dx", i)
			judge(fmt.Sprintf("Keywords: %s, %s, %s", topic, topic, topic), topic, "down", fmt.Sprint("d", i))
			word := fmt.Sprintf("yk%dw", i)
			judge(fmt.Sprintf("Caroline said the %s was finished on Sunday and she liked it a lot", word), word, "up", fmt.Sprint("u", i))
		}
		list := remember("Keywords: marathon, marathon, marathon")
		remember("Melanie ran her first marathon in Porto and finished it in under four hours")
		r := c.Call(t, "recall", map[string]any{"query": "marathon", "token_budget": 200, "fill": true})
		for _, it := range r["items"].([]any) {
			item := it.(map[string]any)
			if item["id"] != list {
				continue
			}
			fs, _ := item["features"].([]any)
			named := false
			for _, f := range fs {
				fw := f.(map[string]any)
				if fw["feature"] == engram.FeaturePrefix+"shape=list" && fw["weight"].(float64) < 0 {
					named = true
				}
			}
			if !named || len(fs) > 3 {
				t.Errorf("the list's item does not name what sank it: %v", item)
			}
			return
		}
		t.Fatalf("the keyword list was not recalled with fill: %v", r["items"])
	})
}
