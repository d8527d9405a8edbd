package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
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
			got = append(got, ownStatements(f.db, func() { f.feedback(t, f.ctx, in) }))
		}
		for i := range got {
			if got[i] > want[engine][i] {
				t.Errorf("feedback %d ran %d statements, want at most %d", i, got[i], want[engine][i])
			}
		}
		t.Logf("%s: %v", engine, got)
	})
}

// TestFeedbackGroupStatements: what the members of a group would each
// read at their start (their memories, those memories' helpfulness,
// their raters' reputations and credits) the group reads once for all of
// them: a group of eight feedbacks, each on its own recall, runs no more
// statements than a group of two. The recall writer is held back (an
// hour between flushes), so every recall is still in its open batch and
// claimed by the group, and the writer's own commits cannot fall inside
// the counted window.
func TestFeedbackGroupStatements(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixtureWith(t, engine, func(o *store.Options) {
			o.RecallFlush, o.AccessFlush = time.Hour, time.Hour
		})
		ctx := f.tenant(t, "grp")
		count := func(n int, tag string) int64 {
			var fbs []store.GroupFeedback
			for i := range n {
				var mems []*engram.Memory
				for j := range 3 {
					mems = append(mems, f.memory(t, ctx, fmt.Sprintf("%s: fact %d of recall %d about the boat", tag, j, i), "life"))
				}
				rec := f.recall(t, ctx, "life", mems...)
				in := engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbUp, Rater: fmt.Sprintf("%s-rater-%d", tag, i)}
				fbs = append(fbs, f.workflow(t, ctx, in, nil))
			}
			var errs []error
			var got, quoted int64
			// Each member looks its recall up before the group, outside
			// its transaction (see RunFeedback): those are not counted.
			backticked := f.db.CountStatementsLike("SELECT * FROM `recalls`", func() {
				quoted = f.db.CountStatementsLike(`SELECT * FROM "recalls"`, func() {
					got = ownStatements(f.db, func() { _, errs = f.db.SubmitFeedbackGroup(fbs) })
				})
			})
			got -= backticked + quoted
			for i, err := range errs {
				if err != nil {
					t.Fatalf("feedback %d of %d: %v", i, n, err)
				}
			}
			return got
		}
		two, eight := count(2, "two"), count(8, "eight")
		if eight > two {
			t.Errorf("a group of 8 ran %d statements, a group of 2 %d: its members read for themselves", eight, two)
		}
		t.Logf("%s: a group of 2 ran %d statements, of 8 %d", engine, two, eight)
	})
}

// ownStatements is CountStatements less the pending-feedback applier's
// polls (SELECT DISTINCT tenant_id FROM feedback_pending), which its
// goroutine runs whenever its ticker fires, inside fn's window or not.
func ownStatements(db *store.DB, fn func()) int64 {
	var all int64
	polls := db.CountStatementsLike("SELECT DISTINCT", func() { all = db.CountStatements(fn) })
	return all - polls
}
