package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// asyncFeedback posts one feedback with Prefer: respond-async and decodes
// its status, wanting status.
func (e *fbEnv) asyncFeedback(t testing.TB, key string, body map[string]any, status int) engram.FeedbackStatus {
	t.Helper()
	r := e.do(t, "POST", "/v1/feedback", key, mustJSON(body), "Prefer", "respond-async")
	wantStatus(t, r, status)
	if got := r.Header.Get("Preference-Applied"); got != "respond-async" {
		t.Errorf("Preference-Applied %q, want respond-async", got)
	}
	var st engram.FeedbackStatus
	mustDecode(t, r, &st)
	return st
}

// awaitApplied polls GET /v1/feedback/{id} until the feedback is applied.
func (e *fbEnv) awaitApplied(t testing.TB, key, id string) engram.FeedbackStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.do(t, "GET", "/v1/feedback/"+id, key, "")
		wantStatus(t, r, http.StatusOK)
		var st engram.FeedbackStatus
		mustDecode(t, r, &st)
		if st.Status == engram.FeedbackApplied {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("feedback %s still %s", id, st.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFeedbackAsyncHTTP: Prefer: respond-async answers 202 with the
// memories the feedback will credit, GET /v1/feedback/{id} shows it
// applied, a repeated idempotency key answers the first feedback, and bad
// input is the same 4xx as without the header, writing nothing.
func TestFeedbackAsyncHTTP(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		m := create(t, e.env, key, `{"content":"The user's boat is called Albatross","category":"life"}`)
		body := map[string]any{"memory_id": m.ID, "thumb": "up", "idempotency_key": "a1"}
		st := e.asyncFeedback(t, key, body, http.StatusAccepted)
		if st.Status != engram.FeedbackPending || len(st.Credits) != 1 || st.Credits[0] != m.ID {
			t.Fatalf("202 answer: %+v", st)
		}
		done := e.awaitApplied(t, key, st.FeedbackID)
		if done.Result == nil || len(done.Result.Credited) != 1 || done.Result.Credited[0].UpCount != 1 {
			t.Fatalf("applied: %+v", done)
		}
		again := e.asyncFeedback(t, key, body, http.StatusOK)
		if again.FeedbackID != st.FeedbackID || !again.Replayed {
			t.Fatalf("repeat: %+v", again)
		}
		before := e.count(t)
		for _, c := range []struct {
			body   map[string]any
			status int
		}{
			{map[string]any{"thumb": "up"}, http.StatusBadRequest},
			{map[string]any{"memory_id": m.ID, "rating": 9}, http.StatusBadRequest},
			{map[string]any{"recall_id": "rec_unknown", "thumb": "up"}, http.StatusNotFound},
			{map[string]any{"interaction_id": "int_unknown", "thumb": "down"}, http.StatusNotFound},
		} {
			r := e.do(t, "POST", "/v1/feedback", key, mustJSON(c.body), "Prefer", "respond-async")
			wantStatus(t, r, c.status)
		}
		sameCounts(t, before, e.count(t))
		wantStatus(t, e.do(t, "GET", "/v1/feedback/fb_unknown", key, ""), http.StatusNotFound)
		other, _ := e.tenant(t, "beta")
		wantStatus(t, e.do(t, "GET", "/v1/feedback/"+st.FeedbackID, other, ""), http.StatusNotFound)
	})
}

func sameCounts(t *testing.T, want, got map[string]int64) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d rows, want %d", k, got[k], v)
		}
	}
}

// TestFeedbackAsyncTwoServers: two servers on one database each queue
// feedback and apply what is pending; every feedback is credited exactly
// once.
func TestFeedbackAsyncTwoServers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		one, two := newFeedbackEnvWith(t, o), newFeedbackEnvWith(t, o)
		key, _ := one.tenant(t, "alpha")
		m := create(t, one.env, key, `{"content":"The user sails on Sundays","category":"life"}`)
		const n = 20
		ids := make([]string, 2*n)
		var wg sync.WaitGroup
		for s, e := range []*fbEnv{one, two} {
			wg.Go(func() {
				for i := range n {
					st := e.asyncFeedback(t, key, map[string]any{"memory_id": m.ID, "thumb": "up", "rater": fmt.Sprintf("r%d-%d", s, i)}, http.StatusAccepted)
					ids[s*n+i] = st.FeedbackID
				}
			})
		}
		wg.Wait()
		for _, id := range ids {
			one.awaitApplied(t, key, id)
		}
		var got struct {
			UpCount int `json:"up_count"`
		}
		mustDecode(t, one.do(t, "GET", "/v1/memories/"+m.ID, key, ""), &got)
		if got.UpCount != 2*n {
			t.Fatalf("up_count %d, want %d", got.UpCount, 2*n)
		}
		if c := one.count(t); c["feedback"] != 2*n {
			t.Fatalf("feedback rows %d, want %d", c["feedback"], 2*n)
		}
	})
}
