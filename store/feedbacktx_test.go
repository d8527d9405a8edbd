package store_test

import (
	"context"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestRunFeedbackWritesWhatTheWorkflowSays: the store applies no rule of
// its own to a feedback. A workflow other than learning's — one that
// sets a memory's confidence to 0.123 and writes its credit as capped —
// is stored as it says: the memory at its next version with that
// confidence and a delta event, the credit not applied (so it does not
// count towards the rater's cap), the feedback with the workflow's
// result.
func TestRunFeedbackWritesWhatTheWorkflowSays(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		m := f.memory(t, f.ctx, "The user's boat is called Albatross", "life")
		head := feedHead(t, f)
		in := engram.FeedbackInput{MemoryID: m.ID, Thumb: engram.ThumbDown, Rater: "k_test/r", IdempotencyKey: "own"}
		fn := func(ctx context.Context, tx engram.FeedbackTx) (*engram.FeedbackResult, error) {
			mems, err := tx.LockMemories(ctx, []string{m.ID})
			if err != nil {
				return nil, err
			}
			mems[0].Confidence = 0.123
			if err := tx.WriteCredits(ctx, engram.CreditWrite{FeedbackID: tx.FeedbackID(), Rater: in.Rater, Signal: -1, At: tx.Now(),
				Moved: mems, Credits: []engram.Credit{{ID: m.ID, Applied: false}}}); err != nil {
				return nil, err
			}
			used, err := tx.CountCredits(ctx, in.Rater, []string{m.ID}, tx.Now().AddDate(0, 0, -1))
			if err != nil || used[m.ID] != 0 {
				t.Errorf("a credit written as capped counts %d (%v)", used[m.ID], err)
			}
			res := &engram.FeedbackResult{FeedbackID: tx.FeedbackID(), Signal: -1, Pairs: []string{},
				Credited: []engram.CreditedMemory{{ID: m.ID, Version: mems[0].Version, Confidence: mems[0].Confidence, Capped: true}}}
			return res, tx.SaveFeedback(ctx, in, res)
		}
		res, err := f.db.RunFeedback(f.ctx, "", "", fn)
		if err != nil {
			t.Fatal(err)
		}
		got := f.get(t, f.ctx, m.ID)
		if got.Confidence != 0.123 || got.Version != m.Version+1 || got.UpCount != 0 || got.DownCount != 0 || got.NeedsRevision ||
			res.Credited[0].Version != got.Version {
			t.Errorf("memory after the workflow: %+v, result %+v", got, res.Credited)
		}
		changes, err := f.db.Changes(f.ctx, head, 10)
		if err != nil || len(changes) != 1 || changes[0].Delta == nil || changes[0].Action != engram.ActionFeedback {
			t.Fatalf("changes: %+v (%v)", changes, err)
		}
		// The stored result is the workflow's: learning's workflow replays it.
		again, err := f.svc.SubmitFeedback(f.ctx, engram.FeedbackInput{MemoryID: m.ID, Thumb: engram.ThumbUp, Rater: "r", IdempotencyKey: "own"})
		if err != nil || !again.Replayed || again.FeedbackID != res.FeedbackID || again.Credited[0].Confidence != 0.123 {
			t.Errorf("replay: %+v, %v", again, err)
		}
	})
}
