package server_test

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestSessionEpisodeCategoriesOrderInjection: an assistant's question
// whose words are a preference's, and a user's stated preference, posted
// to one session, then a recall of what both speak of. The user's
// statement is the episode filed as a preference and goes first, in the
// preferences group; the assistant's question is filed under another
// domain and is not first. Before episodes were filed by what they say
// about the user, the question was a preference too and came first.
func TestSessionEpisodeCategoriesOrderInjection(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSessionEnv(t, engine)
		key, _ := e.tenant(t, "alpha")
		a := postEvents(t, e, key, "trip", `{"events":[
			{"type":"message","role":"assistant","content":"Which seat do you like on flights, and any food you avoid?"},
			{"type":"message","role":"user","content":"I prefer aisle seats on long flights"},
			{"type":"message","role":"user","content":"我不吃辣"}]}`)
		question, stated := episode(t, e, key, a.Events[0].MemoryID), episode(t, e, key, a.Events[1].MemoryID)
		if question.Category == engram.CategoryPreference {
			t.Errorf("the assistant's question is filed as %q", question.Category)
		}
		if stated.Category != engram.CategoryPreference {
			t.Errorf("the user's stated preference is filed as %q", stated.Category)
		}
		if zh := episode(t, e, key, a.Events[2].MemoryID); zh.Category != engram.CategoryPreference {
			t.Errorf("我不吃辣 is filed as %q", zh.Category)
		}
		rec := postRecall(t, e.env, key, map[string]any{"query": "which seat on flights does the user like", "token_budget": 300})
		var prefs []string
		first := ""
		for _, it := range rec.Items {
			if first == "" {
				first = it.ID
			}
			if it.Category == engram.CategoryPreference {
				prefs = append(prefs, it.ID)
			}
		}
		if first != stated.ID {
			t.Errorf("first injected %s, want the user's preference %s:\n%s", first, stated.ID, rec.Context)
		}
		for _, id := range prefs {
			if id == question.ID {
				t.Errorf("the assistant's question is in the preferences group:\n%s", rec.Context)
			}
		}
	})
}
