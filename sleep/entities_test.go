package sleep_test

import (
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/sleep"
	"github.com/engram-memory/engram/store/storetest"
)

// TestSleepLinksRareEntities: the sleep links memories that name the same
// rare entity, each to the one before (same_entity), not a name that many
// memories carry, and a second sleep makes no new link.
func TestSleepLinksRareEntities(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		c := newClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		db, ctx := open(t, engine, c)
		mk := func(content string) string {
			c.set(c.now().Add(time.Minute))
			res, err := db.CreateMemory(ctx, &engram.Memory{Content: content, Category: "life"})
			if err != nil {
				t.Fatal(err)
			}
			return res.Memory.ID
		}
		cat := mk("We adopted a grey cat called Dumpling from the shelter")
		food := mk("The vet says Dumpling should eat less salmon kibble")
		for _, note := range []string{"Our neighbour Maria grows tomatoes", "We lent the ladder to Maria on Sunday",
			"The book club meets at Maria's flat", "A parcel for Maria came to our door", "Ask Maria about the plumber",
			"The fence repair is split with Maria"} {
			mk(note)
		}
		refl := reflections.New(db, reflections.Config{Categories: engram.DefaultCategories}, nil)
		s := sleep.New(db, refl, sleep.Config{MergeSimilarity: 0.9, ArchiveBelow: 0.02, CompactAfter: time.Hour,
			Scoring: engram.DefaultScoringConfig()}, c.now)
		res, err := s.Sleep(ctx)
		if err != nil || res.Linked != 1 {
			t.Fatalf("sleep: %+v %v, want 1 link", res, err)
		}
		links, err := db.FindLinks(ctx, cat)
		if err != nil || len(links) != 1 || links[0].From != food || links[0].To != cat || links[0].Relation != engram.RelSameEntity {
			t.Fatalf("links of the first mention: %+v %v", links, err)
		}
		if res, err := s.Sleep(ctx); err != nil || res.Linked != 0 {
			t.Fatalf("second sleep: %+v %v, want no new link", res, err)
		}
	})
}
