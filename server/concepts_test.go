package server_test

import (
	"net/http"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/store/storetest"
)

// TestRecallConcepts: a question asked by category ("What activities do
// I enjoy?", 我有什么爱好？) recalls a memory that names a member of it
// (swimming, 游泳) and shares no word with the question, and the item
// names the category and member in "concept"; with recall.concepts off
// it does not.
func TestRecallConcepts(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		for _, on := range []bool{true, false} {
			e := newSessionEnv(t, engine, func(c *configs.Config) { c.Recall.Concepts = on })
			key, _ := e.tenant(t, "alpha")
			for _, tc := range []struct {
				memory, other, query string
				want                 engram.Concept
			}{
				{"I went swimming with the kids on Sunday", "The quarterly report is due Friday", "What activities do I enjoy on weekends?",
					engram.Concept{Category: "activities", Term: "swim"}},
				{"我周末去游泳了", "季度报告周五交", "我周末有什么爱好？", engram.Concept{Category: "爱好", Term: "游泳"}},
			} {
				var id string
				for _, content := range []string{tc.memory, tc.other} {
					r := e.do(t, "POST", "/v1/memories", key, mustJSON(map[string]any{"content": content, "category": "life"}))
					wantStatus(t, r, http.StatusCreated)
					var made struct {
						Memory engram.Memory `json:"memory"`
					}
					mustDecode(t, r, &made)
					if content == tc.memory {
						id = made.Memory.ID
					}
				}
				r := e.do(t, "POST", "/v1/recall", key, mustJSON(map[string]any{"query": tc.query, "token_budget": 500, "fill": true}))
				wantStatus(t, r, http.StatusOK)
				var rec apiRecall
				mustDecode(t, r, &rec)
				i := rankOf(rec, id)
				switch {
				case on && (i < 0 || rec.Items[i].Concept == nil || *rec.Items[i].Concept != tc.want):
					t.Fatalf("%q: want %q with concept %+v: %+v", tc.query, tc.memory, tc.want, rec.Items)
				case !on && i >= 0 && rec.Items[i].Concept != nil:
					t.Fatalf("%q with concepts off: %+v", tc.query, rec.Items[i])
				}
			}
		}
	})
}
