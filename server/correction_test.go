package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/engram-memory/engram/store/storetest"
)

// TestCorrectionAgreesOrContradicts: a user's correction supersedes only
// the memories it contradicts. A memory the correction restates or
// entails ("… every year" under "Deploys are frozen from December 20 to
// January 3") is credited as a good answer would credit it — its reward
// rises, no down vote, no revision — while one of the same subject with another value is
// superseded and needs revision.
func TestCorrectionAgreesOrContradicts(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		agrees := create(t, e.env, key, `{"content":"Deploys are frozen from December 20 to January 3 every year","category":"work"}`)
		contradicts := create(t, e.env, key, `{"content":"Deploys are frozen from December 15 to January 10","category":"work"}`)
		rec := e.recall(t, key, "when are deploys frozen", 400)
		if rankOf(rec, agrees.ID) < 0 || rankOf(rec, contradicts.ID) < 0 {
			t.Fatalf("recall did not inject both memories: %+v", rec.Items)
		}
		in := e.interaction(t, key, map[string]any{"prompt": "When are deploys frozen?", "response": "From December 15 to January 10.",
			"recall_id": rec.ID})
		const fix = "Deploys are frozen from December 20 to January 3."
		res, _ := e.feedback(t, key, map[string]any{"interaction_id": in.ID, "thumb": "down", "correction": fix}, http.StatusCreated)
		if res.Knowledge == nil || len(res.Knowledge.Superseded) != 1 || res.Knowledge.Superseded[0] != contradicts.ID {
			t.Fatalf("correction result: %+v, want only %s superseded", res.Knowledge, contradicts.ID)
		}
		got := e.memory(t, key, agrees.ID)
		if got.NeedsRevision || got.SupersededBy != "" || !(got.Reward > 0) || got.DownCount != 0 {
			t.Errorf("the memory the correction restates: needs_revision %v superseded_by %q reward %v down %d, want credited as good",
				got.NeedsRevision, got.SupersededBy, got.Reward, got.DownCount)
		}
		got = e.memory(t, key, contradicts.ID)
		if !got.NeedsRevision || got.SupersededBy != res.Knowledge.MemoryID || !(got.Reward < 0) {
			t.Errorf("the memory the correction contradicts: needs_revision %v superseded_by %q reward %v", got.NeedsRevision,
				got.SupersededBy, got.Reward)
		}
		// The correction links to what it corrected.
		r := e.do(t, "GET", "/v1/memories/"+contradicts.ID+"/links", key, "")
		wantStatus(t, r, http.StatusOK)
		var page struct{ Items []apiLink }
		mustDecode(t, r, &page)
		if len(page.Items) != 1 || page.Items[0].From != res.Knowledge.MemoryID || page.Items[0].Relation != "corrects" {
			t.Errorf("links of the corrected memory: %+v, want corrects from %s", page.Items, res.Knowledge.MemoryID)
		}
	})
}

// TestAsyncCorrectionLinks: a correction posted with Prefer:
// respond-async links to what it corrected once it is applied, as a
// synchronous one does.
func TestAsyncCorrectionLinks(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		old := create(t, e.env, key, `{"content":"Deploys are frozen from December 15 to January 10","category":"work"}`)
		rec := e.recall(t, key, "when are deploys frozen", 400)
		in := e.interaction(t, key, map[string]any{"prompt": "When are deploys frozen?", "response": "From December 15 to January 10.",
			"recall_id": rec.ID})
		st := e.asyncFeedback(t, key, map[string]any{"interaction_id": in.ID, "thumb": "down",
			"correction": "Deploys are frozen from December 20 to January 3."}, http.StatusAccepted)
		done := e.awaitApplied(t, key, st.FeedbackID)
		if done.Result == nil || done.Result.Knowledge == nil || len(done.Result.Knowledge.Superseded) != 1 {
			t.Fatalf("applied correction: %+v", done.Result)
		}
		var page struct{ Items []apiLink }
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			r := e.do(t, "GET", "/v1/memories/"+old.ID+"/links", key, "")
			wantStatus(t, r, http.StatusOK)
			mustDecode(t, r, &page)
			if len(page.Items) > 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(page.Items) != 1 || page.Items[0].From != done.Result.Knowledge.MemoryID || page.Items[0].Relation != "corrects" {
			t.Errorf("links of the corrected memory: %+v, want corrects from %s", page.Items, done.Result.Knowledge.MemoryID)
		}
	})
}
