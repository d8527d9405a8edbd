package mcp_test

import (
	"testing"

	"github.com/engram-memory/engram/store/storetest"
)

// TestRecallReadsSpeakers: through MCP, the recall of a question naming
// one of two speakers (memories whose text opens with their speaker tag)
// scores the other speaker's memory lower and says so in its speaker factor.
func TestRecallReadsSpeakers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newEnv(t, storetest.Open(t, engine))
		c := connect(t, key(t, e.db, "acme"), e.srv.URL)
		id := func(r map[string]any) string { return r["memory"].(map[string]any)["id"].(string) }
		own := id(c.Call(t, "remember", map[string]any{"content": "Caroline: I will take a pottery class", "category": "life", "tags": []string{"Caroline"}}))
		other := id(c.Call(t, "remember", map[string]any{"content": "Melanie: Caroline, take the class! Caroline, I will take a class too", "category": "life", "tags": []string{"Melanie"}}))
		r := c.Call(t, "recall", map[string]any{"query": "What class will Caroline take?", "token_budget": 500, "fill": true})
		score, speaker := map[string]float64{}, map[string]any{}
		for _, it := range r["items"].([]any) {
			item := it.(map[string]any)
			score[item["id"].(string)], speaker[item["id"].(string)] = item["score"].(float64), item["speaker"]
		}
		if !(score[own] > score[other]) || speaker[own] != nil {
			t.Fatalf("the named speaker's memory must score higher, without a speaker factor: %v", r["items"])
		}
		if s, ok := speaker[other].(float64); !ok || s <= 0 || s >= 1 {
			t.Fatalf("the other speaker's memory must carry its speaker factor: %v", r["items"])
		}
	})
}
