package server_test

import (
	"net/http"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestHopsDumpling: a conversation introduces "a grey cat called
// Dumpling" in one turn and says "she only eats salmon kibble" in a later
// one, linked to it. "What does Dumpling have for dinner" does not bring
// the second turn by its words; with hops 1 it comes through the link,
// marked via the first, and the neighbour's cat does not. Hops outside 0–2 is a 400 that records no recall.
func TestHopsDumpling(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		cat := create(t, e.env, key, `{"content":"We adopted a grey cat called Dumpling from the shelter","category":"life"}`)
		neighbour := create(t, e.env, key, `{"content":"The neighbour's cat climbs our fence every evening","category":"life"}`)
		food := create(t, e.env, key, `{"content":"She only eats salmon kibble","category":"life"}`)
		wantStatus(t, e.do(t, "POST", "/v1/memories/"+food.ID+"/links", key, `{"to":"`+cat.ID+`","relation":"mentions"}`), http.StatusOK)

		ask := func(hops int, query ...string) apiRecall {
			q := "what does Dumpling have for dinner"
			if len(query) > 0 {
				q = query[0]
			}
			r := e.do(t, "POST", "/v1/recall", key, mustJSON(map[string]any{"query": q, "token_budget": 300, "hops": hops, "fill": true}))
			wantStatus(t, r, http.StatusOK)
			var rec apiRecall
			mustDecode(t, r, &rec)
			return rec
		}
		if rec := ask(0); rankOf(rec, food.ID) >= 0 {
			t.Fatalf("without hops the second turn shares no word with the question: %+v", rec.Items)
		}
		rec := ask(1)
		i := rankOf(rec, food.ID)
		if i < 0 || rankOf(rec, neighbour.ID) >= 0 {
			t.Fatalf("with hops 1 the linked turn must come, and not the neighbour's cat: %+v", rec.Items)
		}
		if v := rec.Items[i].Via; v == nil || v.From != cat.ID || v.Relation != "mentions" {
			t.Fatalf("via: %+v", rec.Items[i].Via)
		}
		if rankOf(rec, cat.ID) < 0 || rec.Items[rankOf(rec, cat.ID)].Via != nil {
			t.Fatalf("the direct match must stay, without via: %+v", rec.Items)
		}
		// A linked memory the words found too, but weakly, is lifted to
		// the damped relevance of the memory it hangs from.
		const q = "did the grey shelter cat Dumpling eat"
		weak, lifted := ask(0, q), ask(1, q)
		wi, li := rankOf(weak, food.ID), rankOf(lifted, food.ID)
		if wi < 0 || li < 0 || weak.Items[wi].Via != nil || lifted.Items[li].Via == nil ||
			!(lifted.Items[li].Breakdown.Relevance > weak.Items[wi].Breakdown.Relevance) {
			t.Fatalf("lift: without hops %+v\nwith hops %+v", weak.Items, lifted.Items)
		}

		before := e.snapshot(t, key)
		for _, bad := range []string{`"hops":3`, `"hops":-1`, `"hops":"1"`, `"hops":1.5`} {
			wantError(t, e.do(t, "POST", "/v1/recall", key, `{"query":"cat","token_budget":100,`+bad+`}`), http.StatusBadRequest, engram.EINVALID)
		}
		sameSnapshot(t, "memories after refused recalls", before, e.snapshot(t, key))
	})
}

// TestHopsKeepToTheUser: a link from one end user's memory to another's
// (memory-id routes are tenant-wide) never carries a recall across: with
// hops 1, ann's recall does not bring bob's memory, and bob's does.
func TestHopsKeepToTheUser(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newFeedbackEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		cat := create(t, e.env, key, `{"content":"We adopted a grey cat called Dumpling from the shelter","category":"life","user_id":"ann"}`)
		food := create(t, e.env, key, `{"content":"She only eats salmon kibble","category":"life","user_id":"bob"}`)
		wantStatus(t, e.do(t, "POST", "/v1/memories/"+food.ID+"/links", key, `{"to":"`+cat.ID+`","relation":"mentions"}`), http.StatusOK)
		wantStatus(t, e.do(t, "POST", "/v1/memories/"+cat.ID+"/links", key, `{"to":"`+food.ID+`","relation":"related"}`), http.StatusOK)
		for _, tc := range []struct {
			user      string
			cat, food bool
		}{{"ann", true, false}, {"bob", false, false}, {"", false, false}} {
			r := e.do(t, "POST", "/v1/recall", key, mustJSON(map[string]any{"query": "what does Dumpling have for dinner", "token_budget": 300, "hops": 2, "fill": true, "user_id": tc.user}))
			wantStatus(t, r, http.StatusOK)
			var rec apiRecall
			mustDecode(t, r, &rec)
			if (rankOf(rec, cat.ID) >= 0) != tc.cat || (rankOf(rec, food.ID) >= 0) != tc.food {
				t.Fatalf("user %q: %+v", tc.user, rec.Items)
			}
		}
	})
}

// TestEpisodesLinked: each message's episode is linked answered_by to the
// next message's, within a post and across posts.
func TestEpisodesLinked(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		a := postEvents(t, e, key, "conv-1", `{"events":[{"type":"message","speaker":"Caroline","content":"We adopted a grey cat called Dumpling"},{"type":"message","speaker":"Melanie","content":"What a lovely name for a cat"}]}`)
		b := postEvents(t, e, key, "conv-1", `{"type":"message","speaker":"Caroline","content":"She only eats salmon kibble"}`)
		ids := []string{a.Events[0].MemoryID, a.Events[1].MemoryID, b.Events[0].MemoryID}
		for i, id := range ids[:2] {
			r := e.do(t, "GET", "/v1/memories/"+id+"/links", key, "")
			wantStatus(t, r, http.StatusOK)
			var page struct{ Items []apiLink }
			mustDecode(t, r, &page)
			found := false
			for _, l := range page.Items {
				found = found || l.From == id && l.To == ids[i+1] && l.Relation == engram.RelAnsweredBy
			}
			if !found {
				t.Errorf("episode %d: links %+v, want answered_by %s", i, page.Items, ids[i+1])
			}
		}
	})
}
