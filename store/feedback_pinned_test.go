package store_test

import (
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestFeedbackPinnedContextTakesNoCredit: a pinned P0 memory that a
// recall injected as context (Pinned in its stored breakdown), scored as
// high as the memory that answered, takes nothing from a thumb up on that
// recall: no share, no vote, no confidence, no helpfulness evidence and
// no credit row, so the console's promoted list does not show it. The
// memory that answered takes the whole answer: the vote and the evidence.
// A thumb down and a rating of an answer leave the pinned memory alone
// too, and a feedback on the pinned memory itself still moves it.
func TestFeedbackPinnedContextTakesNoCredit(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		res, err := f.db.CreateMemory(f.ctx, &engram.Memory{Content: "The user's name is Ada Okafor", Category: engram.CategoryLife,
			Priority: engram.P0})
		if err != nil {
			t.Fatal(err)
		}
		name := res.Memory
		ship := f.memory(t, f.ctx, "The payments team ships on Tuesdays and Thursdays", "work")
		// The pinned memory scores as if it matched the query perfectly,
		// tied with the memory that answered, as recalls scored it before.
		recall := func() *engram.Recall {
			r := &engram.Recall{Query: "when does the team ship", Route: engram.Route{Domains: []engram.DomainScore{{Name: "work", Score: 0.9}}},
				TokenBudget: 200, CreatedAt: time.Now(), Items: []engram.RecallItem{
					{ID: name.ID, Version: name.Version, Category: name.Category, Text: name.Content, Score: 0.25,
						Breakdown: engram.ScoreBreakdown{Pinned: true, Score: 0.25}},
					{ID: ship.ID, Version: ship.Version, Category: ship.Category, Text: ship.Content, Score: 0.25,
						Breakdown: engram.ScoreBreakdown{Match: 0.8, Score: 0.25}},
				}}
			if err := f.db.SaveRecall(f.ctx, r, "", ""); err != nil {
				t.Fatal(err)
			}
			return r
		}
		before, shipBefore := f.get(t, f.ctx, name.ID), f.get(t, f.ctx, ship.ID)

		out := f.feedback(t, f.ctx, engram.FeedbackInput{RecallID: recall().ID, Thumb: engram.ThumbUp, Rater: "r1"})
		if len(out.Credited) != 1 || out.Credited[0].ID != ship.ID || out.Credited[0].Weight != 1 {
			t.Errorf("credited %+v, want the matching memory alone with weight 1", out.Credited)
		}
		after, shipAfter := f.get(t, f.ctx, name.ID), f.get(t, f.ctx, ship.ID)
		if !sameLearned(before, after) {
			t.Errorf("pinned memory moved by a thumb up: %+v → %+v", before, after)
		}
		if shipAfter.UpCount != 1 || shipAfter.Confidence <= shipBefore.Confidence {
			t.Errorf("matching memory: up %d, confidence %v → %v; want the vote and a rise", shipAfter.UpCount,
				shipBefore.Confidence, shipAfter.Confidence)
		}
		help, err := f.db.MemoryHelpfulness(f.ctx, name.ID)
		if err != nil {
			t.Fatal(err)
		}
		if help.Memory != (engram.Helpfulness{}) {
			t.Errorf("pinned memory's helpfulness evidence %+v, want none", help.Memory)
		}
		if help, _ := f.db.MemoryHelpfulness(f.ctx, ship.ID); help.Memory.Good <= 0 {
			t.Errorf("matching memory's helpfulness evidence %+v, want good evidence", help.Memory)
		}
		up, _, err := f.db.MemoryMovements(f.ctx, time.Now().Add(-time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(up) != 1 || up[0].Memory.ID != ship.ID {
			t.Errorf("promoted %+v, want the matching memory alone", up)
		}

		f.feedback(t, f.ctx, engram.FeedbackInput{RecallID: recall().ID, Thumb: engram.ThumbDown, Rater: "r2"})
		if got := f.get(t, f.ctx, name.ID); !sameLearned(before, got) {
			t.Errorf("pinned memory moved by a thumb down: %+v → %+v", before, got)
		}

		// A rating of an answer is credited through its recall the same way.
		a := f.interaction(t, f.ctx, engram.Interaction{Prompt: "when does the team ship", Response: "Tuesdays and Thursdays.",
			RecallID: recall().ID})
		if out := f.rate(t, a, 5); len(out.Credited) != 1 || out.Credited[0].ID != ship.ID {
			t.Errorf("a 5-star rating credited %+v, want the matching memory alone", out.Credited)
		}
		if got := f.get(t, f.ctx, name.ID); !sameLearned(before, got) {
			t.Errorf("pinned memory moved by a rating: %+v → %+v", before, got)
		}
		if help, _ := f.db.MemoryHelpfulness(f.ctx, name.ID); help.Memory != (engram.Helpfulness{}) {
			t.Errorf("pinned memory's helpfulness evidence after a rating and a thumb down %+v, want none", help.Memory)
		}

		direct := f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: name.ID, Thumb: engram.ThumbUp, Rater: "r3"})
		if got := f.get(t, f.ctx, name.ID); len(direct.Credited) != 1 || got.UpCount != 1 {
			t.Errorf("a thumb on the pinned memory itself: credited %+v, up %d; want it moved", direct.Credited, got.UpCount)
		}
	})
}
