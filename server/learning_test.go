package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

type apiRecall struct {
	ID    string              `json:"recall_id"`
	Items []engram.RecallItem `json:"items"`
}

// recall asks to fill the budget: these tests follow how feedback moves
// a memory's rank, which the relevance cut would hide once it sinks.
func (e *fbEnv) recall(t testing.TB, key, query string, budget int) apiRecall {
	t.Helper()
	r := e.do(t, "POST", "/v1/recall", key, mustJSON(map[string]any{"query": query, "token_budget": budget, "fill": true}))
	wantStatus(t, r, http.StatusOK)
	var rec apiRecall
	mustDecode(t, r, &rec)
	return rec
}

func rankOf(rec apiRecall, id string) int {
	for i, it := range rec.Items {
		if it.ID == id {
			return i
		}
	}
	return -1
}

// TestHelpfulnessHTTP: a memory that keeps turning up in answers judged
// bad sinks for a query nobody rated, within a handful of recalls, and
// the breakdown says why (helpfulness with its evidence, and
// needs_revision once the down votes lead); the memories of good answers
// keep their score.
func TestHelpfulnessHTTP(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		topics := []string{"kayak", "violin", "pottery", "chess", "sourdough"}
		stuffed := create(t, e.env, key, `{"content":"Notes on kayak, violin, pottery, chess, sourdough, kayak trips, violin lessons, pottery class, chess club, sourdough bread","category":"life"}`)
		good := map[string]string{}
		for _, topic := range topics {
			m := create(t, e.env, key, fmt.Sprintf(`{"content":"Caroline took up %s in May of the year she moved to Lisbon, and kept at it every week","category":"life"}`, topic))
			good[topic] = m.ID
		}
		// The tenant's other answers are good: the base rate.
		for i := range 6 {
			m := create(t, e.env, key, fmt.Sprintf(`{"content":"Harbour report %d: calm water and sunny","category":"life"}`, i))
			rec := e.recall(t, key, fmt.Sprintf("harbour report %d", i), 60)
			if rankOf(rec, m.ID) < 0 {
				t.Fatalf("weather recall %d did not inject its note: %+v", i, rec.Items)
			}
			e.feedback(t, key, map[string]any{"recall_id": rec.ID, "thumb": "up", "rater": fmt.Sprint("u", i)}, http.StatusCreated)
		}
		before := e.recall(t, key, "sourdough", 200)
		if rankOf(before, stuffed.ID) != 0 {
			t.Fatalf("before feedback the stuffed note should lead the unrated query: %+v", before.Items)
		}
		// Four answers about other topics, each spoiled by the note at
		// the top, each thumbed down by its own user.
		for i, topic := range topics[:4] {
			rec := e.recall(t, key, topic, 200)
			if rankOf(rec, stuffed.ID) < 0 {
				t.Fatalf("recall %q did not inject the note", topic)
			}
			e.feedback(t, key, map[string]any{"recall_id": rec.ID, "thumb": "down", "rater": fmt.Sprint("d", i)}, http.StatusCreated)
		}
		after := e.recall(t, key, "sourdough", 200)
		if r := rankOf(after, stuffed.ID); r >= 0 && r < rankOf(after, good["sourdough"]) {
			t.Fatalf("after four bad answers the note still outranks the fact for a query nobody rated: %+v", after.Items)
		}
		for _, it := range after.Items {
			b := it.Breakdown
			want := b.Relevance * b.Reward * b.Confidence * b.Retention * b.Revision * b.Superseded * b.Helpfulness * b.Emotion
			if diff := want - b.Score; diff > 1e-9 || diff < -1e-9 {
				t.Errorf("%s: breakdown %+v does not multiply to its score", it.ID, b)
			}
			switch it.ID {
			case stuffed.ID:
				if !(b.Helpfulness < 0.85) || b.HelpBad != 4 || b.HelpGood != 0 || !(b.Revision < 1) {
					t.Errorf("the note's breakdown does not explain its demotion: %+v", b)
				}
			case good["sourdough"]:
				if b.Helpfulness != 1 || b.HelpBad != 0 {
					t.Errorf("an unjudged memory was demoted: %+v", b)
				}
			}
		}

		imp := e.do(t, "GET", "/v1/memories/"+stuffed.ID+"/impact", key, "")
		wantStatus(t, imp, http.StatusOK)
		var got engram.Impact
		mustDecode(t, imp, &got)
		if got.MemoryID != stuffed.ID || got.With.N != 4 || got.With.Mean != -1 || got.Without.N != 0 || got.Effect != nil ||
			!(got.Helpfulness < 0.85) || got.Bad != 4 {
			t.Errorf("impact of the note: %s", imp)
		}
		other, _ := e.tenant(t, "beta")
		wantError(t, e.do(t, "GET", "/v1/memories/"+stuffed.ID+"/impact", other, ""), http.StatusNotFound, "not_found")
		wantError(t, e.do(t, "GET", "/v1/memories/mem_nope/impact", key, ""), http.StatusNotFound, "not_found")
	})
}

// TestOriginReputationHTTP: when the notes one extractor wrote keep
// spoiling answers, a note it wrote that nobody has judged yet sinks below
// a fact for a query nobody rated, and the breakdown names the origin's
// evidence; memories of other origins keep their score; a second server
// on the same database ranks alike.
func TestOriginReputationHTTP(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		e, other := newFeedbackEnvWith(t, o), newFeedbackEnvWith(t, o) // two servers, one database
		key, _ := e.tenant(t, "alpha")
		extractor := `"source":{"kind":"extractor","name":"keywords-v1"},"type":"note"`
		topics := []string{"kayak", "violin", "pottery", "chess"}
		for _, topic := range topics {
			create(t, e.env, key, fmt.Sprintf(`{"content":"Follow up: %s, %s, %s","category":"life",%s}`, topic, topic, topic, extractor))
		}
		unjudged := create(t, e.env, key, `{"content":"Notes on sourdough, sourdough bread, sourdough starters, sourdough class","category":"life",`+extractor+`}`)
		fact := create(t, e.env, key, `{"content":"Caroline took up sourdough in May of the year she moved to Lisbon, and kept at it every week","category":"life","source":"chat"}`)
		// Good answers from the chat's memories: the tenant's reference.
		for i := range 6 {
			m := create(t, e.env, key, fmt.Sprintf(`{"content":"Harbour report %d: calm water and sunny","category":"life","source":"chat"}`, i))
			rec := e.recall(t, key, fmt.Sprintf("harbour report %d", i), 20)
			if len(rec.Items) != 1 || rec.Items[0].ID != m.ID {
				t.Fatalf("harbour recall %d: %+v", i, rec.Items)
			}
			e.feedback(t, key, map[string]any{"recall_id": rec.ID, "thumb": "up", "rater": fmt.Sprint("u", i)}, http.StatusCreated)
		}
		before := e.recall(t, key, "sourdough class", 200)
		if rankOf(before, unjudged.ID) != 0 {
			t.Fatalf("before feedback the extractor's note should lead: %+v", before.Items)
		}
		// Each of the extractor's other notes spoils an answer.
		for i, topic := range topics {
			rec := e.recall(t, key, topic, 20)
			if len(rec.Items) != 1 {
				t.Fatalf("recall %q: %+v, want the extractor's note alone", topic, rec.Items)
			}
			e.feedback(t, key, map[string]any{"recall_id": rec.ID, "thumb": "down", "rater": fmt.Sprint("d", i)}, http.StatusCreated)
		}
		after := e.recall(t, key, "sourdough class", 200)
		if r := rankOf(after, unjudged.ID); r >= 0 && r < rankOf(after, fact.ID) {
			t.Fatalf("the unjudged note of a misleading origin still outranks the fact: %+v", after.Items)
		}
		for _, it := range after.Items {
			b := it.Breakdown
			switch it.ID {
			case unjudged.ID:
				if !(b.OriginFactor < 0.5) || b.Helpfulness != b.OriginFactor || b.HelpBad != 0 || !(b.OriginBad >= 4) {
					t.Errorf("the unjudged note's breakdown does not explain its demotion: %+v", b)
				}
			case fact.ID:
				if b.Helpfulness != 1 || b.OriginFactor != 1 {
					t.Errorf("a memory of a good origin was demoted: %+v", b)
				}
			}
		}
		// The other server, which saw none of the feedback, ranks alike.
		seen, r := other.recall(t, key, "sourdough class", 200), rankOf(after, unjudged.ID)
		if r < 0 || rankOf(seen, unjudged.ID) != r || seen.Items[r].Breakdown.OriginFactor != after.Items[r].Breakdown.OriginFactor {
			t.Errorf("the other server ranks the note of a misleading origin differently: %+v", seen.Items)
		}
		imp := e.do(t, "GET", "/v1/memories/"+unjudged.ID+"/impact", key, "")
		wantStatus(t, imp, http.StatusOK)
		var got engram.Impact
		mustDecode(t, imp, &got)
		if !(got.OriginFactor < 0.5) || got.Helpfulness != got.OriginFactor || !(got.OriginBad >= 4) || got.Bad != 0 {
			t.Errorf("impact of the unjudged note: %s", imp)
		}
	})
}

// TestFeedbackLearningBadInput: feedback on a recall that injected
// nothing is accepted and teaches nothing; a storm of votes from one
// rater is capped per memory, counted, and never a server error.
func TestFeedbackLearningBadInput(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		m := create(t, e.env, key, `{"content":"The user keeps bees on the roof","category":"life"}`)
		empty := e.recall(t, key, "quantum chromodynamics", 100)
		if len(empty.Items) != 0 {
			t.Fatalf("want an empty recall, got %+v", empty.Items)
		}
		res, _ := e.feedback(t, key, map[string]any{"recall_id": empty.ID, "thumb": "down"}, http.StatusCreated)
		if len(res.Credited) != 0 {
			t.Errorf("feedback on an empty recall credited %+v", res.Credited)
		}
		e.count(t)
		var help int64
		if err := e.raw.Table("memory_help").Count(&help).Error; err != nil {
			t.Fatal(err)
		}
		if help != 0 {
			t.Errorf("feedback on an empty recall left %d helpfulness rows", help)
		}

		const storm = 40
		for i := range storm {
			rec := e.recall(t, key, "bees roof", 100)
			r := e.do(t, "POST", "/v1/feedback", key, mustJSON(map[string]any{"recall_id": rec.ID, "thumb": "down", "rater": "storm"}))
			wantStatus(t, r, http.StatusCreated)
			var res engram.FeedbackResult
			mustDecode(t, r, &res)
			if len(res.Credited) != 1 || res.Credited[0].Capped != (i >= 3) {
				t.Fatalf("vote %d: %s", i, r)
			}
		}
		var rep struct{ Votes int64 }
		if err := e.raw.Table("rater_reputation").Where("rater LIKE ?", "%/storm").Select("votes").Scan(&rep).Error; err != nil {
			t.Fatal(err)
		}
		if rep.Votes != storm {
			t.Errorf("rater reputation counted %d votes, want %d", rep.Votes, storm)
		}
		r := e.do(t, "GET", "/v1/memories/"+m.ID+"/impact", key, "")
		wantStatus(t, r, http.StatusOK)
		var imp engram.Impact
		if err := json.Unmarshal(r.Body, &imp); err != nil {
			t.Fatal(err)
		}
		if imp.With.N != 3 {
			t.Errorf("a capped storm counted %d outcomes, want the cap of 3: %s", imp.With.N, r)
		}
	})
}

// TestTwoServersShareHelpfulness: votes sent to two servers on one
// database at once all count, and a recall on either sees the evidence
// both took.
func TestTwoServersShareHelpfulness(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		one, two := newFeedbackEnvWith(t, o), newFeedbackEnvWith(t, o)
		key, _ := one.tenant(t, "alpha")
		m := create(t, one.env, key, `{"content":"The user's boat is called Albatross","category":"life"}`)
		const votes = 12
		recalls := make([]apiRecall, votes)
		for i := range recalls {
			recalls[i] = one.recall(t, key, "boat albatross", 100)
		}
		var wg sync.WaitGroup
		for i, rec := range recalls {
			e := one
			if i%2 == 1 {
				e = two
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.do(t, "POST", "/v1/feedback", key, mustJSON(map[string]any{"recall_id": rec.ID, "thumb": "down", "rater": fmt.Sprint("u", i)}))
				if r.Status != http.StatusCreated {
					t.Errorf("vote %d: %s", i, r)
				}
			}()
		}
		wg.Wait()
		for _, e := range []*fbEnv{one, two} {
			r := e.do(t, "GET", "/v1/memories/"+m.ID+"/impact", key, "")
			wantStatus(t, r, http.StatusOK)
			var imp engram.Impact
			mustDecode(t, r, &imp)
			if imp.With.N != votes || imp.With.Mean != -1 {
				t.Errorf("impact after %d concurrent votes on two servers: %s", votes, r)
			}
			rec := e.recall(t, key, "albatross", 100)
			if len(rec.Items) != 1 || rec.Items[0].Breakdown.HelpBad != votes {
				t.Errorf("recall does not see the shared evidence: %+v", rec.Items)
			}
		}
	})
}

// TestTwoServersGroupedFeedback: feedbacks sent at once to two servers on
// one database, which each commit theirs in groups, agree: an idempotency
// key sent to both applies once and replays everywhere else, an unknown
// recall fails alone, and every applied feedback counts once in the
// memory and in the evidence either server reads.
func TestTwoServersGroupedFeedback(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		one, two := newFeedbackEnvWith(t, o), newFeedbackEnvWith(t, o)
		key, _ := one.tenant(t, "alpha")
		m := create(t, one.env, key, `{"content":"The user's boat is called Albatross","category":"life"}`)
		rec := one.recall(t, key, "boat albatross", 100)
		const n = 32
		status, ids := make([]int, n), make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			e := one
			if i%2 == 1 {
				e = two
			}
			body := map[string]any{"recall_id": rec.ID, "thumb": "up", "rater": fmt.Sprint("u", i)}
			switch {
			case i%8 == 7:
				body["recall_id"] = "rec_unknown"
			case i%3 == 0:
				body["idempotency_key"] = fmt.Sprint("k", i%6)
			}
			wg.Go(func() {
				r := e.do(t, "POST", "/v1/feedback", key, mustJSON(body))
				status[i] = r.Status
				var res engram.FeedbackResult
				if r.Status < 300 {
					mustDecode(t, r, &res)
					ids[i] = res.FeedbackID
				}
			})
		}
		wg.Wait()
		applied, plain, byKey := 0, 0, map[string]map[string]bool{}
		for i := range n {
			switch {
			case i%8 == 7:
				if status[i] != http.StatusNotFound {
					t.Errorf("feedback %d on an unknown recall: status %d", i, status[i])
				}
			case i%3 == 0:
				k := fmt.Sprint("k", i%6)
				if byKey[k] == nil {
					byKey[k] = map[string]bool{}
				}
				byKey[k][ids[i]] = true
				if status[i] == http.StatusCreated {
					applied++
				} else if status[i] != http.StatusOK {
					t.Errorf("feedback %d with key %s: status %d", i, k, status[i])
				}
			default:
				if status[i] != http.StatusCreated {
					t.Errorf("feedback %d: status %d", i, status[i])
				}
				applied++
				plain++
			}
		}
		for k, fbs := range byKey {
			if len(fbs) != 1 {
				t.Errorf("key %s answered with %d feedbacks: %v", k, len(fbs), fbs)
			}
		}
		if want := plain + len(byKey); applied != want {
			t.Errorf("%d feedbacks applied, want %d (each key once)", applied, want)
		}
		for _, e := range []*fbEnv{one, two} {
			r := e.do(t, "GET", "/v1/memories/"+m.ID+"/impact", key, "")
			wantStatus(t, r, http.StatusOK)
			var imp engram.Impact
			mustDecode(t, r, &imp)
			if imp.With.N != int64(applied) {
				t.Errorf("impact after %d applied feedbacks on two servers: %s", applied, r)
			}
			if got := e.memory(t, key, m.ID); got.UpCount != int64(applied) {
				t.Errorf("up count %d after %d applied feedbacks", got.UpCount, applied)
			}
		}
	})
}

// TestCorrectionBecomesKnowledge: a correction on a thumbed-down answer
// becomes a memory with the feedback and interaction as its source; the
// memory the answer rested on for that subject needs revision and names
// its successor, which the next recall of the question ranks first. An
// unrelated memory of the same recall is left alone.
func TestCorrectionBecomesKnowledge(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		old := create(t, e.env, key, `{"content":"The user's dentist is Dr. Li, appointments on Monday","category":"life"}`)
		other := create(t, e.env, key, `{"content":"The user walks the dog after the dentist visit","category":"life"}`)
		rec := e.recall(t, key, "who is the user's dentist", 200)
		if rankOf(rec, old.ID) < 0 {
			t.Fatalf("recall did not inject the dentist memory: %+v", rec.Items)
		}
		in := e.interaction(t, key, map[string]any{"prompt": "Who is my dentist?", "response": "Dr. Li, on Mondays.", "recall_id": rec.ID})
		const fix = "The user's dentist is Dr. Wang now, appointments on Tuesday"
		res, _ := e.feedback(t, key, map[string]any{"interaction_id": in.ID, "thumb": "down", "correction": fix}, http.StatusCreated)
		if res.Knowledge == nil || len(res.Knowledge.Superseded) != 1 || res.Knowledge.Superseded[0] != old.ID {
			t.Fatalf("correction result: %+v", res.Knowledge)
		}
		made := e.memory(t, key, res.Knowledge.MemoryID)
		var src map[string]string
		if err := json.Unmarshal(made.Source, &src); err != nil || made.Content != fix || made.Type != "correction" ||
			src["kind"] != "feedback" || src["feedback_id"] != res.FeedbackID || src["interaction_id"] != in.ID {
			t.Errorf("the correction's memory: %+v (source %s)", made, made.Source)
		}
		if got := e.memory(t, key, old.ID); !got.NeedsRevision || got.SupersededBy != made.ID {
			t.Errorf("superseded memory: needs_revision %v superseded_by %q", got.NeedsRevision, got.SupersededBy)
		}
		if got := e.memory(t, key, other.ID); got.SupersededBy != "" {
			t.Errorf("a memory about another subject was superseded: %+v", got)
		}
		after := e.recall(t, key, "who is the user's dentist", 200)
		if rankOf(after, made.ID) != 0 || rankOf(after, old.ID) < 0 {
			t.Errorf("after the correction: %+v", after.Items)
		}
		// The same feedback again (idempotency) or the same correction on
		// another answer makes no second memory.
		again, _ := e.feedback(t, key, map[string]any{"interaction_id": in.ID, "thumb": "down", "correction": fix}, http.StatusCreated)
		if again.Knowledge == nil || again.Knowledge.MemoryID != made.ID {
			t.Errorf("the same correction again: %+v", again.Knowledge)
		}
	})
}

// TestFeatureModelHTTP: memories of one origin, where answers resting on
// its keyword lists go wrong and those resting on its sentences go well:
// a keyword list nobody judged sinks below a sentence for a query nobody
// rated, its breakdown and GET /v1/memories/{id}/impact name the list
// shape among the features that moved it, with a negative weight.
func TestFeatureModelHTTP(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		judge := func(content, query, thumb, rater string) {
			m := create(t, e.env, key, `{"content":"`+content+`","category":"life","source":"chat"}`)
			rec := e.recall(t, key, query, 50)
			if len(rec.Items) == 0 || rec.Items[0].ID != m.ID {
				t.Fatalf("recall %q: %+v, want %s first", query, rec.Items, m.ID)
			}
			e.feedback(t, key, map[string]any{"recall_id": rec.ID, "thumb": thumb, "rater": rater}, http.StatusCreated)
		}
		for i := range 30 {
			topic := fmt.Sprintf("zq%dx", i)
			judge(fmt.Sprintf("Keywords: %s, %s, %s", topic, topic, topic), topic, "down", fmt.Sprint("d", i))
			word := fmt.Sprintf("yk%dw", i)
			judge(fmt.Sprintf("Caroline said the %s was finished on Sunday and she liked it a lot", word), word, "up", fmt.Sprint("u", i))
		}
		list := create(t, e.env, key, `{"content":"Keywords: marathon, marathon, marathon","category":"life","source":"chat"}`)
		fact := create(t, e.env, key, `{"content":"Melanie ran her first marathon in Porto and finished it in under four hours","category":"life","source":"chat"}`)
		rec := e.recall(t, key, "marathon", 200)
		if r := rankOf(rec, list.ID); r >= 0 && r < rankOf(rec, fact.ID) {
			t.Fatalf("the unjudged keyword list still outranks the sentence: %+v", rec.Items)
		}
		named := func(fs []engram.FeatureWeight) bool {
			for _, f := range fs {
				if f.Feature == engram.FeaturePrefix+"shape=list" && f.Weight < 0 {
					return true
				}
			}
			return false
		}
		for _, it := range rec.Items {
			if it.ID == list.ID && (!(it.Breakdown.FeatureFactor < 1) || !named(it.Breakdown.Features) || len(it.Breakdown.Features) > 3) {
				t.Errorf("the list's breakdown does not name what sank it: %+v", it.Breakdown)
			}
		}
		imp := e.do(t, "GET", "/v1/memories/"+list.ID+"/impact", key, "")
		wantStatus(t, imp, http.StatusOK)
		var got engram.Impact
		mustDecode(t, imp, &got)
		if !(got.FeatureFactor < 1) || !named(got.Features) || got.Helpfulness > got.FeatureFactor {
			t.Errorf("impact of the unjudged list: %s", imp)
		}
	})
}
