package server_test

import (
	"net/http"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestEpisodeMentions: a message's episode is linked "mentions" to the
// nearest earlier memory naming the first entity it mentions (not a
// speaker), and through it hops 1 brings the earlier turn.
func TestEpisodeMentions(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		a := postEvents(t, e, key, "conv-1", `{"events":[{"type":"message","speaker":"Caroline","content":"We adopted a grey cat and named her Dumpling"},{"type":"message","speaker":"Melanie","content":"What a lovely name, Caroline"}]}`)
		b := postEvents(t, e, key, "conv-1", `{"type":"message","speaker":"Caroline","content":"Yesterday Dumpling knocked over the salmon kibble"}`)
		r := e.do(t, "GET", "/v1/memories/"+b.Events[0].MemoryID+"/links", key, "")
		wantStatus(t, r, http.StatusOK)
		var page struct{ Items []apiLink }
		mustDecode(t, r, &page)
		found := false
		for _, l := range page.Items {
			found = found || l.From == b.Events[0].MemoryID && l.To == a.Events[0].MemoryID && l.Relation == engram.RelMentions
		}
		if !found {
			t.Fatalf("links %+v, want mentions %s", page.Items, a.Events[0].MemoryID)
		}
		// Melanie's turn names only a speaker: no mentions link.
		r = e.do(t, "GET", "/v1/memories/"+a.Events[1].MemoryID+"/links", key, "")
		mustDecode(t, r, &page)
		for _, l := range page.Items {
			if l.From == a.Events[1].MemoryID && l.Relation == engram.RelMentions {
				t.Fatalf("a speaker is not an entity: %+v", l)
			}
		}
	})
}
