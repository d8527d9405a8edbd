package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// TestFeedbackGroupSavepointsOnFailure: a group whose feedbacks all
// succeed is written without a savepoint and leaves the memories as the
// same feedbacks one by one do; a group in which one fails half-way
// through its credits is written again with a savepoint for each, and
// only the failed one leaves nothing (its idempotency key stays free).
func TestFeedbackGroupSavepointsOnFailure(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		f.clock.set(time.Now().UTC().Truncate(time.Second))
		one, clean, failing := newGroupCase(t, f, "one"), newGroupCase(t, f, "clean"), newGroupCase(t, f, "failing")
		inputs := func(c *groupCase) []engram.FeedbackInput {
			var out []engram.FeedbackInput
			for i, r := range []string{"a", "b", "c", "d"} {
				in := engram.FeedbackInput{RecallID: c.recall.ID, Thumb: engram.ThumbUp, Rater: r, IdempotencyKey: "k" + r}
				if i == 2 {
					in.Thumb = engram.ThumbDown
				}
				out = append(out, in)
			}
			return out
		}
		for _, in := range inputs(one) {
			if _, err := f.run(f.workflow(t, one.ctx, in, nil)); err != nil {
				t.Fatal(err)
			}
		}
		var group []store.GroupFeedback
		for _, in := range inputs(clean) {
			group = append(group, f.workflow(t, clean.ctx, in, nil))
		}
		var errs []error
		if n := f.db.CountStatementsLike("SAVEPOINT", func() { _, errs = f.db.SubmitFeedbackGroup(group) }); n != 0 {
			t.Errorf("a group without a failure ran %d savepoints", n)
		}
		for i, err := range errs {
			if err != nil {
				t.Errorf("feedback %d of the group: %v", i, err)
			}
		}
		for i := range one.mems {
			a, b := f.get(t, one.ctx, one.mems[i].ID), f.get(t, clean.ctx, clean.mems[i].ID)
			if a.Version != b.Version || a.Reward != b.Reward || a.Confidence != b.Confidence || a.UpCount != b.UpCount || a.DownCount != b.DownCount {
				t.Errorf("memory %d: one by one %+v, in a group %+v", i, a, b)
			}
		}

		ctx, cancel := context.WithCancel(failing.ctx)
		defer cancel()
		group = nil
		for i, in := range inputs(failing) {
			if i == 1 {
				group = append(group, f.workflow(t, ctx, in, func(tx engram.FeedbackTx) engram.FeedbackTx { return failingTx{tx, cancel} }))
				continue
			}
			group = append(group, f.workflow(t, failing.ctx, in, nil))
		}
		if n := f.db.CountStatementsLike("SAVEPOINT", func() { _, errs = f.db.SubmitFeedbackGroup(group) }); n != int64(len(group)-1) {
			// The feedback given up is not run again.
			t.Errorf("a group with a failure ran %d savepoints, want one a feedback run again (%d)", n, len(group)-1)
		}
		for i, err := range errs {
			if i == 1 && !errors.Is(err, context.Canceled) {
				t.Errorf("the feedback given up in the group: %v", err)
			}
			if i != 1 && err != nil {
				t.Errorf("feedback %d of the group: %v", i, err)
			}
		}
		for i, m := range failing.mems {
			if got := f.get(t, failing.ctx, m.ID); got.Version != m.Version+3 {
				t.Errorf("memory %d: version %d, want %d (three feedbacks)", i, got.Version, m.Version+3)
			}
		}
		again := engram.FeedbackInput{RecallID: failing.recall.ID, Thumb: engram.ThumbUp, Rater: "b", IdempotencyKey: "kb"}
		if res, err := f.svc.SubmitFeedback(failing.ctx, again); err != nil || res.Replayed {
			t.Errorf("the given-up feedback again: %+v, %v", res, err)
		}
	})
}
