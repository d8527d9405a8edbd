package store_test

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// awaitApplied polls a feedback's status until it is applied.
func awaitApplied(t *testing.T, f *fbFixture, ctx context.Context, id string) *engram.FeedbackStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := f.svc.FeedbackStatus(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Status == engram.FeedbackApplied {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("feedback %s still %s", id, st.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFeedbackAsync: a queued feedback answers pending with the memories
// it will credit, is applied once by the applier through the same
// workflow, and a repeat of its idempotency key, while pending or after,
// returns the first feedback and credits nothing again.
func TestFeedbackAsync(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		ctx := f.ctx
		m1, m2 := f.memory(t, ctx, "The user's boat is called Albatross", "life"), f.memory(t, ctx, "The boat is moored in Kiel", "life")
		rec := f.recall(t, ctx, "life", m1, m2)
		in := engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbUp, IdempotencyKey: "async-1"}
		st, err := f.svc.QueueFeedback(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{m1.ID, m2.ID}
		sort.Strings(want)
		if st.Status != engram.FeedbackPending || st.Replayed || !slices.Equal(st.Credits, want) {
			t.Fatalf("queued: %+v, want pending crediting %v", st, want)
		}
		again, err := f.svc.QueueFeedback(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if again.FeedbackID != st.FeedbackID || !again.Replayed {
			t.Fatalf("repeat: %+v, want the first (%s) replayed", again, st.FeedbackID)
		}
		done := awaitApplied(t, f, ctx, st.FeedbackID)
		if done.Result == nil || len(done.Result.Credited) != 2 || !slices.Equal(done.Credits, want) {
			t.Fatalf("applied: %+v", done)
		}
		after, err := f.svc.QueueFeedback(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if after.FeedbackID != st.FeedbackID || !after.Replayed || after.Status != engram.FeedbackApplied {
			t.Fatalf("repeat after applying: %+v", after)
		}
		for _, m := range []*engram.Memory{m1, m2} {
			if got := f.get(t, ctx, m.ID); got.UpCount != 1 {
				t.Errorf("%s: up_count %d, want 1 (credited once)", m.ID, got.UpCount)
			}
		}
		if n, err := f.db.CountRows("feedback_pending"); err != nil || n != 0 {
			t.Fatalf("pending rows left: %d %v", n, err)
		}
		if _, err := f.svc.FeedbackStatus(ctx, "fb_unknown"); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Fatalf("unknown feedback: %v, want ENOTFOUND", err)
		}
		if _, err := f.svc.FeedbackStatus(f.tenant(t, "beta"), st.FeedbackID); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Fatalf("another tenant's feedback: %v, want ENOTFOUND", err)
		}
	})
}

// TestFeedbackAsyncBadInput: a queued feedback is validated and its
// target read before anything is written: a client error writes nothing.
func TestFeedbackAsyncBadInput(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		ctx := f.ctx
		m := f.memory(t, ctx, "The user's boat is called Albatross", "life")
		for _, c := range []struct {
			in   engram.FeedbackInput
			code string
		}{
			{engram.FeedbackInput{Thumb: engram.ThumbUp}, engram.EINVALID},
			{engram.FeedbackInput{MemoryID: m.ID, Thumb: "sideways"}, engram.EINVALID},
			{engram.FeedbackInput{RecallID: "rec_unknown", Thumb: engram.ThumbUp}, engram.ENOTFOUND},
			{engram.FeedbackInput{InteractionID: "int_unknown", Thumb: engram.ThumbUp}, engram.ENOTFOUND},
			{engram.FeedbackInput{MemoryID: "mem_unknown", Thumb: engram.ThumbDown, IdempotencyKey: "x"}, engram.ENOTFOUND},
		} {
			if _, err := f.svc.QueueFeedback(ctx, c.in); engram.ErrorCode(err) != c.code {
				t.Errorf("%+v: %v, want %s", c.in, err, c.code)
			}
		}
		for _, table := range []string{"feedback_pending", "feedback"} {
			if n, err := f.db.CountRows(table); err != nil || n != 0 {
				t.Errorf("%s: %d rows (%v), want none", table, n, err)
			}
		}
	})
}

// TestFeedbackAsyncGroup: many feedbacks queued at once are applied in
// groups, each exactly once, as the same feedbacks one by one would be.
func TestFeedbackAsyncGroup(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		ctx := f.ctx
		m := f.memory(t, ctx, "The user sails on Sundays", "life")
		const n = 40
		ids := make([]string, n)
		for i := range n {
			rec := f.recall(t, ctx, "life", m)
			st, err := f.svc.QueueFeedback(context.WithoutCancel(ctx), engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbUp,
				Rater: "r" + string(rune('a'+i%26)) + string(rune('a'+i/26))})
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = st.FeedbackID
		}
		for _, id := range ids {
			awaitApplied(t, f, ctx, id)
		}
		if got := f.get(t, ctx, m.ID); got.UpCount != n {
			t.Fatalf("up_count %d, want %d", got.UpCount, n)
		}
		if c, err := f.db.CountRows("feedback"); err != nil || c != n {
			t.Fatalf("feedback rows %d (%v), want %d", c, err, n)
		}
	})
}
