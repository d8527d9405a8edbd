package store_test

import (
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestFeedbackStatements: a feedback runs no more statements than it did
// when the store ran the workflow itself (the figures below, measured
// then): a recall's thumb on three memories, a vote on one memory, and a
// correction of a judged answer that pairs with a regeneration.
func TestFeedbackStatements(t *testing.T) {
	want := map[string][]int64{"sqlite": {9, 8, 25}, "postgres": {12, 11, 28}}
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		a := f.memory(t, f.ctx, "The user's sailing boat is called Albatross", "life")
		b := f.memory(t, f.ctx, "The boat is moored in Kiel harbour", "life")
		c := f.memory(t, f.ctx, "The user sails on Sundays", "life")
		rec := f.recall(t, f.ctx, "life", a, b, c)
		first := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s", TurnID: "t", Prompt: "boat?", Response: "Seagull", RecallID: rec.ID})
		second := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s", TurnID: "t", Prompt: "boat?", Response: "Albatross", RecallID: rec.ID})
		f.thumb(t, second, engram.ThumbUp)
		var got []int64
		for _, in := range []engram.FeedbackInput{
			{RecallID: rec.ID, Thumb: engram.ThumbUp, Rater: "r1", IdempotencyKey: "k1"},
			{MemoryID: b.ID, Thumb: engram.ThumbDown, Rater: "r2"},
			{InteractionID: first.ID, Thumb: engram.ThumbDown, Rater: "r3", Correction: "The boat is called Albatross, not Seagull"},
		} {
			got = append(got, f.db.CountStatements(func() { f.feedback(t, f.ctx, in) }))
		}
		for i := range got {
			if got[i] > want[engine][i] {
				t.Errorf("feedback %d ran %d statements, want at most %d", i, got[i], want[engine][i])
			}
		}
		t.Logf("%s: %v", engine, got)
	})
}
