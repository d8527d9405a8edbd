package index_test

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/store/storetest"
)

// A question asked by category finds the memories that name a member of
// it, in English and Chinese, naming the category and member; without
// Concepts, or for a question of manner, time or reason, it does not.
func TestSearchConcepts(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ix := index.New(db, index.Config{RowCache: 100})
		ctx := storetest.Tenant(t, db, "acme")
		for _, c := range []string{
			"I went swimming with the kids on Sunday", "The quarterly report is due Friday",
			"My grey cat only eats salmon kibble", "我周末去游泳了", "季度报告周五交",
			"Pets and hobbies are welcome in the office", "爱好是我的事",
		} {
			mustCreate(t, db, ctx, &engram.Memory{Content: c, Category: "life"})
		}
		find := func(text string, concepts bool) []engram.LexicalHit {
			t.Helper()
			hits, err := ix.SearchMemories(ctx, engram.LexicalQuery{Text: text, Limit: 10, Expand: true, Concepts: concepts})
			if err != nil {
				t.Fatal(err)
			}
			return hits
		}
		for _, tc := range []struct {
			query, want string
			concept     engram.Concept
		}{
			{"What activities do I enjoy?", "I went swimming with the kids on Sunday", engram.Concept{Category: "activities", Term: "swim"}},
			{"What pets do I have?", "My grey cat only eats salmon kibble", engram.Concept{Category: "pets", Term: "cat"}},
			{"我有什么爱好？", "我周末去游泳了", engram.Concept{Category: "爱好", Term: "游泳"}},
		} {
			hits := find(tc.query, true)
			var got *engram.LexicalHit
			for i := range hits {
				if hits[i].Memory.Content == tc.want {
					got = &hits[i]
				}
			}
			if got == nil {
				t.Errorf("%q: got %q, want %q among them", tc.query, contents(hits), tc.want)
				continue
			}
			if got.Concept == nil || *got.Concept != tc.concept {
				t.Errorf("%q: concept %+v, want %+v", tc.query, got.Concept, tc.concept)
			}
			if got.Match != 0 {
				t.Errorf("%q: match %v, want 0: a member is not the query's word", tc.query, got.Match)
			}
			for _, h := range find(tc.query, false) {
				if h.Memory.Content == tc.want || h.Concept != nil {
					t.Errorf("%q without concepts found %q (concept %+v)", tc.query, h.Memory.Content, h.Concept)
				}
			}
		}
		for _, q := range []string{"How do I feel about my pets?", "When did I start my hobbies?", "我为什么有这些爱好？"} {
			hits := find(q, true)
			if len(hits) != 1 {
				t.Errorf("%q: got %q, want the memory that says the category only", q, contents(hits))
			}
			for _, h := range hits {
				if h.Concept != nil {
					t.Errorf("%q: %q found by concept %+v", q, h.Memory.Content, h.Concept)
				}
			}
		}
		// A hit the query's own words found names no concept.
		for _, h := range find("What is due on Friday?", true) {
			if h.Concept != nil {
				t.Errorf("report: concept %+v", h.Concept)
			}
		}
	})
}
