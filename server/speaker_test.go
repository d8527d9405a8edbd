package server_test

import (
	"net/http"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestRecallReadsSpeakers: a question naming one speaker of a
// conversation favours that speaker's turns. Melanie's last turn says
// more of the question's words (she calls Caroline by name) and scores
// higher without the read; for "What class will Caroline take?"
// Caroline's own turn scores higher and Melanie's carries
// breakdown.speaker. A question naming both speakers, or none, leaves the
// scores alone. The same in Chinese, whose names stand between other
// characters without spaces. /v1/prompt's memories are read the same way.
func TestRecallReadsSpeakers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		for _, tc := range []struct {
			name, session, events, named, both, none string
		}{
			{"english", "conv-en",
				`{"events":[{"type":"message","speaker":"Caroline","content":"I signed up for a pottery class last week"},{"type":"message","speaker":"Melanie","content":"That sounds lovely"},{"type":"message","speaker":"Caroline","content":"It starts on Monday"},{"type":"message","speaker":"Melanie","content":"Caroline, take the class! Caroline, I will take a class too"}]}`,
				"What class will Caroline take?", "What class will Caroline and Melanie take?", "Who will take a class?"},
			{"chinese", "conv-zh",
				`{"events":[{"type":"message","speaker":"小明","content":"我上周报名了陶艺课"},{"type":"message","speaker":"小红","content":"听起来真好"},{"type":"message","speaker":"小明","content":"星期一开始"},{"type":"message","speaker":"小红","content":"小明，上陶艺课吧！小明，我也要上陶艺课"}]}`,
				"小明要上什么陶艺课？", "小明和小红要上什么陶艺课？", "谁要上陶艺课？"},
		} {
			res := postEvents(t, e, key, tc.session, tc.events)
			own, other := res.Events[0].MemoryID, res.Events[3].MemoryID
			ask := func(q string) apiRecall {
				r := e.do(t, "POST", "/v1/recall", key, mustJSON(map[string]any{"query": q, "token_budget": 500, "fill": true}))
				wantStatus(t, r, http.StatusOK)
				var rec apiRecall
				mustDecode(t, r, &rec)
				return rec
			}
			rec := ask(tc.named)
			i, j := rankOf(rec, own), rankOf(rec, other)
			if i < 0 || j < 0 || rec.Items[i].Score <= rec.Items[j].Score {
				t.Fatalf("%s: the named speaker's turn must score higher: %+v", tc.name, rec.Items)
			}
			if s := rec.Items[j].Breakdown.Speaker; s <= 0 || s >= 1 || rec.Items[i].Breakdown.Speaker != 0 {
				t.Fatalf("%s: speaker factors %v (other) and %v (named)", tc.name, s, rec.Items[i].Breakdown.Speaker)
			}
			// The prompt's memories come from the same read.
			r := e.do(t, "POST", "/v1/prompt", key, mustJSON(map[string]any{"query": tc.named, "token_budget": 1000}))
			wantStatus(t, r, http.StatusOK)
			var prompt struct {
				Recall struct {
					Items   []engram.RecallItem `json:"items"`
					LeftOut []engram.RecallItem `json:"left_out"`
				} `json:"recall"`
			}
			mustDecode(t, r, &prompt)
			factor := map[string]float64{}
			for _, it := range append(prompt.Recall.Items, prompt.Recall.LeftOut...) {
				factor[it.ID] = it.Breakdown.Speaker
			}
			if f, ok := factor[other]; !ok || f <= 0 || f >= 1 || factor[own] != 0 {
				t.Fatalf("%s: prompt: speaker factors %v (other %s, named %s)", tc.name, factor, other, own)
			}
			for _, q := range []string{tc.both, tc.none} {
				for _, it := range ask(q).Items {
					if it.Breakdown.Speaker != 0 {
						t.Fatalf("%s: %q names both speakers or none, yet %+v", tc.name, q, it)
					}
				}
			}
		}
	})
}
