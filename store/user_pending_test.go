package store_test

import (
	"context"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestForgetUserPendingFeedback: forgetting a user erases the feedback
// the user posted asynchronously and that is not applied yet (its reason
// and correction are the user's words), and leaves another user's.
func TestForgetUserPendingFeedback(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		none := func(context.Context, engram.FeedbackTx) ([]string, *engram.FeedbackResult, error) {
			return nil, nil, nil
		}
		mine, err := db.CreateMemory(engram.NewContextWithUser(ctx, "ann"), &engram.Memory{Content: "Ann keeps bees", Category: "life"})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []engram.FeedbackInput{
			{MemoryID: "mem_elsewhere", Thumb: engram.ThumbDown, Reason: "ann's words", UserID: "ann"},
			{MemoryID: mine.Memory.ID, Thumb: engram.ThumbUp, Reason: "on ann's memory"},
			{MemoryID: "mem_other", Thumb: engram.ThumbUp, Reason: "bob's words", UserID: "bob"},
		} {
			if _, err := db.QueueFeedback(ctx, in.RecallID, in, none); err != nil {
				t.Fatal(err)
			}
		}
		res, _, err := db.ForgetUser(ctx, "ann")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := db.CountRows("feedback_pending"); err != nil || n != 1 {
			t.Fatalf("pending rows after forgetting ann: %d (%v), want bob's one", n, err)
		}
		if res.Feedback != 2 {
			t.Errorf("forget counted %d feedback, want ann's 2 pending", res.Feedback)
		}
	})
}
