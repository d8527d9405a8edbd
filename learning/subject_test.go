package learning_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store/storetest"
)

// TestKnowledgeUpdateBySubject: a knowledge update replaces a memory only
// by a newer one about the same entity and attribute. Two people's
// look-alike facts, two speakers' look-alike turns, two key parents and
// two client subjects are different subjects however many words they
// share; the same person's new value, the same key parent's new value
// and the same client subject supersede, and the breakdown names the
// subject read. A second recaller on a second connection to the same
// database ranks the same way: what the rule needs is in the rows.
func TestKnowledgeUpdateBySubject(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		opts := storetest.Options(t, engine)
		db := storetest.OpenWith(t, opts)
		ctx := storetest.Tenant(t, db, "subjects")
		all := []string{engram.CategoryLife, engram.CategoryWork}
		r := newRecaller(t, db, fixedRouter{all}, engram.DefaultRecallConfig())
		day := func(d int) *time.Time {
			ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d)
			return &ts
		}
		src := json.RawMessage(`{"kind":"import","name":"people"}`)
		mem := func(content string, d int, tags ...string) *engram.Memory {
			return &engram.Memory{Category: engram.CategoryLife, Content: content, Source: src, OccurredAt: day(d), Tags: tags}
		}
		keyed := func(key, content string, d int) *engram.Memory {
			m := mem(content, d)
			m.Key = key
			return m
		}
		stored := addMemories(t, db, ctx, append([]*engram.Memory{
			mem("Maya Ruiz: Has a dog named Waffles", 1),                                              // 0
			mem("Gavin Ruiz: Has a dog named Waffles", 2),                                             // 1: another person
			mem("Maya Ruiz: Lives in Lisbon", 1),                                                      // 2
			mem("Maya Ruiz: Lives in Oslo", 30),                                                       // 3: Maya moved
			mem("Caroline: I went to the pottery class on Sunday", 1),                                 // 4
			mem("Melanie: I went to the pottery class on Sunday", 2),                                  // 5: another speaker
			keyed("/people/maya/home", "Lives in a flat near the harbour", 1),                         // 6
			keyed("/people/gavin/home", "Lives in a flat near the harbour park", 2),                   // 7: another parent
			keyed("/people/maya/home-2026", "Lives in a flat near the old harbour", 9),                // 8: the same parent, newer
			mem("The spare key hangs behind the blue door", 1, "subject:house/spare key"),             // 9
			mem("Nobody knows where the spare key is anymore, ask Pat", 5, "subject:house/spare key"), // 10: the client says one subject
			mem("The garage key hangs behind the blue door", 6, "subject:house/garage key"),           // 11: the client says another
		}, fillers(engram.CategoryWork, 10)...)...)
		check := func(r *learning.Recaller, query string, want map[int]int, subject map[int]string) []engram.RecallItem {
			t.Helper()
			rec := recall(t, r, ctx, engram.RecallRequest{Query: query, TokenBudget: 4000, Fill: true})
			for i, by := range want {
				it, at := findItem(rec.Items, stored[i].ID)
				if at < 0 {
					t.Fatalf("%q: %q not recalled: %+v", query, stored[i].Content, rec.Items)
				}
				wantBy := ""
				if by >= 0 {
					wantBy = stored[by].ID
				}
				if it.Breakdown.SupersededBy != wantBy || (by >= 0) != (it.Breakdown.Superseded < 1) {
					t.Errorf("%q: %q superseded %v by %q, want by %q", query, stored[i].Content, it.Breakdown.Superseded,
						it.Breakdown.SupersededBy, wantBy)
				}
				if s, ok := subject[i]; ok && it.Breakdown.Subject != s {
					t.Errorf("%q: %q subject %q, want %q", query, stored[i].Content, it.Breakdown.Subject, s)
				}
			}
			return rec.Items
		}
		check(r, "Ruiz dog named Waffles", map[int]int{0: -1, 1: -1}, nil)
		check(r, "Where does Maya Ruiz live", map[int]int{2: 3, 3: -1}, map[int]string{2: "Maya Ruiz / Lives"})
		check(r, "who went to the pottery class on Sunday", map[int]int{4: -1, 5: -1}, nil)
		check(r, "flat near the harbour", map[int]int{6: 8, 7: -1, 8: -1}, map[int]string{6: "/people/maya / Lives flat near"})
		items := check(r, "where is the spare key, behind the blue door", map[int]int{9: 10, 10: -1, 11: -1},
			map[int]string{9: "house/spare key"})

		// A second server: its own index and recaller, another connection.
		other := newRecaller(t, storetest.OpenWith(t, opts), fixedRouter{all}, engram.DefaultRecallConfig())
		again := check(other, "where is the spare key, behind the blue door", map[int]int{9: 10, 10: -1, 11: -1}, nil)
		if len(again) != len(items) {
			t.Fatalf("second recaller: %d items, want %d", len(again), len(items))
		}
		for i := range items {
			// Scores differ in the last digits: retention moves with the clock.
			a, b := items[i], again[i]
			if a.ID != b.ID || a.Breakdown.SupersededBy != b.Breakdown.SupersededBy || a.Breakdown.Subject != b.Breakdown.Subject {
				t.Errorf("rank %d: %s (%+v) on one server, %s (%+v) on the other", i, a.ID, a.Breakdown, b.ID, b.Breakdown)
			}
		}
	})
}
