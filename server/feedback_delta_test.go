package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestCreditSeenByOtherServer: a credit made through one server is in the
// next recall's scores on another server of the same database, whose
// index had the credited rows cached, and both score like a third server
// that loads everything afresh.
func TestCreditSeenByOtherServer(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		one, two := newFeedbackEnvWith(t, o), newFeedbackEnvWith(t, o)
		key, _ := one.tenant(t, "alpha")
		a := one.memory(t, key, create(t, one.env, key, `{"content":"The user's sailing boat is called Albatross","category":"life"}`).ID)
		b := one.memory(t, key, create(t, one.env, key, `{"content":"The boat Albatross is moored in Kiel harbour","category":"life"}`).ID)
		const query = "boat albatross"
		warm := two.recall(t, key, query, 200) // caches the candidate rows on server two
		if rankOf(warm, a.ID) < 0 || rankOf(warm, b.ID) < 0 {
			t.Fatalf("recall on server two: %+v", warm.Items)
		}
		for i := range 4 {
			rec := one.recall(t, key, query, 200)
			res, _ := one.feedback(t, key, map[string]any{"recall_id": rec.ID, "thumb": "down", "rater": fmt.Sprint("u", i)}, http.StatusCreated)
			if len(res.Credited) != 2 {
				t.Fatalf("vote %d credited %+v", i, res.Credited)
			}
		}
		three := newFeedbackEnvWith(t, o) // a fresh index
		got, fresh := two.recall(t, key, query, 200), three.recall(t, key, query, 200)
		// Every feedback moves both; each counts one vote, on its recall's
		// best-scored memory.
		if down := one.memory(t, key, a.ID).DownCount + one.memory(t, key, b.ID).DownCount; down != 4 {
			t.Fatalf("four down votes counted %d times on the two memories, want 4", down)
		}
		for _, m := range []engram.Memory{a, b} {
			stored := one.memory(t, key, m.ID)
			if stored.Version != m.Version+4 {
				t.Fatalf("stored after four down votes: down %d version %d", stored.DownCount, stored.Version)
			}
			i, j := rankOf(got, m.ID), rankOf(fresh, m.ID)
			if i < 0 || j < 0 {
				t.Fatalf("%s missing: server two %+v, fresh server %+v", m.ID, got.Items, fresh.Items)
			}
			bd, want := got.Items[i].Breakdown, fresh.Items[j].Breakdown
			if got.Items[i].Version != stored.Version || bd.Confidence != stored.Confidence || bd.Reward != want.Reward ||
				bd.Revision != want.Revision || bd.Stability != stored.Stability || bd.Helpfulness != want.Helpfulness || bd.Relevance != want.Relevance {
				t.Errorf("server two scores %s at version %d with %+v; stored version %d confidence %v stability %v; a fresh server: %+v",
					m.ID, got.Items[i].Version, bd, stored.Version, stored.Confidence, stored.Stability, want)
			}
			// Down votes lower confidence; the reward factor counts up votes only.
			if was := warm.Items[rankOf(warm, m.ID)].Breakdown; bd.Reward != was.Reward || !(bd.Confidence < was.Confidence) {
				t.Errorf("%s: reward %v → %v, confidence %v → %v after four down votes", m.ID, was.Reward, bd.Reward, was.Confidence, bd.Confidence)
			}
		}
	})
}

// TestFeedbackFailureCases: feedback on a recall that injected nothing is
// stored and credits nothing; a storm of concurrent votes from one rater
// never answers 5xx, moves each memory at most the cap and records the
// rest as capped; an unknown recall is a 404 that writes nothing.
func TestFeedbackFailureCases(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		a := create(t, e.env, key, `{"content":"The user's sailing boat is called Albatross","category":"life"}`)
		b := create(t, e.env, key, `{"content":"The boat Albatross is moored in Kiel harbour","category":"life"}`)
		e.count(t) // opens the counting connection for every subtest

		t.Run("nothing injected", func(t *testing.T) {
			empty := e.recall(t, key, "quantum chromodynamics lattice", 200)
			if len(empty.Items) != 0 {
				t.Fatalf("recall injected %+v", empty.Items)
			}
			flushRecalls(t, e.env)
			before := e.count(t)
			res, _ := e.feedback(t, key, map[string]any{"recall_id": empty.ID, "thumb": "down"}, http.StatusCreated)
			after := e.count(t)
			if len(res.Credited) != 0 || after["feedback"] != before["feedback"]+1 || after["feedback_credits"] != before["feedback_credits"] ||
				after["memory_events"] != before["memory_events"] {
				t.Errorf("credited %+v; rows %v → %v", res.Credited, before, after)
			}
		})

		t.Run("storm from one rater", func(t *testing.T) {
			rec := e.recall(t, key, "boat albatross", 200)
			if rankOf(rec, a.ID) < 0 || rankOf(rec, b.ID) < 0 {
				t.Fatalf("recall: %+v", rec.Items)
			}
			flushRecalls(t, e.env)
			before := e.count(t)
			wasA, wasB := e.memory(t, key, a.ID), e.memory(t, key, b.ID)
			const votes = 24
			var wg sync.WaitGroup
			var mu sync.Mutex
			capped := 0
			for i := range votes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := e.do(t, "POST", "/v1/feedback", key, mustJSON(map[string]any{"recall_id": rec.ID, "thumb": "up", "rater": "storm"}))
					if r.Status != http.StatusCreated {
						t.Errorf("vote %d: %s", i, r)
						return
					}
					var res engram.FeedbackResult
					mustDecode(t, r, &res)
					mu.Lock()
					defer mu.Unlock()
					for _, c := range res.Credited {
						if c.Capped {
							capped++
						}
					}
				}()
			}
			wg.Wait()
			limit := int64(engram.DefaultFeedbackConfig().RaterCap)
			top := rec.Items[0]
			for _, it := range rec.Items {
				if it.Score > top.Score {
					top = it
				}
			}
			for _, was := range []engram.Memory{wasA, wasB} {
				got := e.memory(t, key, was.ID)
				ups := int64(0) // only the recall's best-scored memory counts votes
				if was.ID == top.ID {
					ups = limit
				}
				if got.UpCount != was.UpCount+ups || got.Version != was.Version+limit {
					t.Errorf("%s after %d votes of one rater: up %d → %d, version %d → %d; want up +%d, version +%d", was.ID, votes,
						was.UpCount, got.UpCount, was.Version, got.Version, ups, limit)
				}
			}
			after := e.count(t)
			if want := 2 * (votes - int(limit)); capped != want || after["feedback"] != before["feedback"]+votes ||
				after["feedback_credits"] != before["feedback_credits"]+2*votes || after["memory_events"] != before["memory_events"]+2*limit {
				t.Errorf("capped credits %d, want %d; rows %v → %v", capped, want, before, after)
			}
		})

		t.Run("unknown recall", func(t *testing.T) {
			before := e.count(t)
			wantError(t, e.do(t, "POST", "/v1/feedback", key, `{"recall_id":"rec_unknown00000000000000","thumb":"up"}`),
				http.StatusNotFound, engram.ENOTFOUND)
			if after := e.count(t); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("rows %v → %v", before, after)
			}
		})
	})
}
