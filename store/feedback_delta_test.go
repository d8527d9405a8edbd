package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// recallFor stores a recall of query that injected ms with equal scores.
func (f *fbFixture) recallFor(t *testing.T, query string, ms ...*engram.Memory) *engram.Recall {
	t.Helper()
	r := &engram.Recall{Query: query, Route: engram.Route{Domains: []engram.DomainScore{{Name: "life", Score: 0.9}}},
		TokenBudget: 100, CreatedAt: time.Now()}
	for _, m := range ms {
		r.Items = append(r.Items, engram.RecallItem{ID: m.ID, Version: m.Version, Category: m.Category, Text: m.Content, Score: 0.5})
	}
	if err := f.db.SaveRecall(f.ctx, r, "", ""); err != nil {
		t.Fatal(err)
	}
	return r
}

// chain checks that a memory's history is whole: each event's before is
// the previous event's after, and the last after is the stored memory's
// learned state.
func chain(t *testing.T, f *fbFixture, id string) []*engram.MemoryEvent {
	t.Helper()
	evs, err := f.db.FindMemoryEvents(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.After == nil || ev.After.Version != ev.Version {
			t.Fatalf("event %d (version %d, %s): after %+v", i, ev.Version, ev.Action, ev.After)
		}
		if i > 0 && (ev.Before == nil || !sameLearned(ev.Before, evs[i-1].After)) {
			t.Errorf("event version %d (%s): before %+v, previous after %+v", ev.Version, ev.Action, ev.Before, evs[i-1].After)
		}
	}
	if last, m := evs[len(evs)-1].After, f.get(t, f.ctx, id); !sameLearned(last, m) || last.Content != m.Content {
		t.Errorf("history ends in %+v; the memory is %+v", last, m)
	}
	return evs
}

func sameLearned(a, b *engram.Memory) bool {
	return a.Version == b.Version && a.Reward == b.Reward && a.Confidence == b.Confidence && a.UpCount == b.UpCount &&
		a.DownCount == b.DownCount && a.Stability == b.Stability && a.NeedsRevision == b.NeedsRevision &&
		a.Learned == b.Learned && a.ReinforcedAt.Equal(b.ReinforcedAt)
}

// TestFeedbackDeltaEvents: credits are delta events in the change feed
// (no full copies), a few hundred bytes each; the history rebuilds the
// full before and after of each, a rollback reaches a credit's version,
// and folding them in the sleep cycle keeps the history whole, the
// learned queries included.
func TestFeedbackDeltaEvents(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		a := f.memory(t, f.ctx, "The user's sailing boat is called Albatross", "life")
		b := f.memory(t, f.ctx, "The boat is moored in Kiel harbour", "life")
		head := feedHead(t, f)
		bytesBefore, err := f.db.EventLogBytes(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		const n = 6
		for i := range n {
			thumb := engram.ThumbUp
			if i%3 == 2 {
				thumb = engram.ThumbDown
			}
			rec := f.recallFor(t, fmt.Sprint("what is the boat called ", i), a, b)
			f.feedback(t, f.ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: thumb, Rater: fmt.Sprint("r", i)})
		}
		bytesAfter, err := f.db.EventLogBytes(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if per := (bytesAfter - bytesBefore) / (2 * n); per > 700 {
			t.Errorf("event log grew %d bytes per credit", per)
		}
		changes, err := f.db.Changes(f.ctx, head, 100)
		if err != nil {
			t.Fatal(err)
		}
		learned := 0
		for _, c := range changes {
			if c.Action != engram.ActionFeedback || c.Delta == nil || c.Before != nil || c.After != nil {
				t.Fatalf("change %+v: want a feedback delta", c)
			}
			if c.Delta.Learned != nil {
				learned++
			}
		}
		if len(changes) != 2*n || learned != 2*4 {
			t.Fatalf("%d changes, %d with learned queries; want %d and %d", len(changes), learned, 2*n, 2*4)
		}
		// The states-only read: the same credits, in the same order,
		// without their deltas.
		states, err := f.db.StateChanges(f.ctx, head-1, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(states) != len(changes)+1 || states[0].After == nil || states[0].After.ID != b.ID {
			t.Fatalf("%d state changes, the first %+v; want %d, b's create first", len(states), states[0], len(changes)+1)
		}
		for i, c := range states[1:] {
			w := changes[i]
			if c.Seq != w.Seq || c.MemoryID != w.MemoryID || c.Version != w.Version || c.Action != w.Action ||
				!c.At.Equal(w.At) || c.Delta != nil || c.Before != nil || c.After != nil {
				t.Fatalf("state change %+v, want %+v without its delta", c, w)
			}
		}
		evs := chain(t, f, a.ID)
		if len(evs) != n+1 || evs[3].Action != engram.ActionFeedback || evs[3].Before.Content != a.Content {
			t.Fatalf("history: %d events, the third credit %+v", len(evs), evs[3])
		}
		// Rollback to the state after the second credit.
		back, err := f.db.RollbackMemory(f.ctx, a.ID, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := evs[2].After; back.Reward != want.Reward || back.UpCount != want.UpCount || back.Learned != want.Learned ||
			back.Content != a.Content {
			t.Errorf("rolled back to %+v, want the state after version 3 %+v", back, want)
		}
		chain(t, f, a.ID)

		// Fold: each memory's six credits are one run, before a's
		// rollback.
		folded, err := f.db.FoldFeedbackEvents(f.ctx, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if folded != 2*(n-1) {
			t.Errorf("folded %d events", folded)
		}
		for _, id := range []string{a.ID, b.ID} {
			chain(t, f, id)
		}
		evs = chain(t, f, b.ID)
		if len(evs) != 2 || evs[1].After.Learned == "" || evs[1].After.Learned != f.get(t, f.ctx, b.ID).Learned {
			t.Errorf("b after folding: %d events, learned %q", len(evs), evs[len(evs)-1].After.Learned)
		}
		if again, err := f.db.FoldFeedbackEvents(f.ctx, time.Now().Add(time.Hour)); err != nil || again != 0 {
			t.Errorf("a second fold removed %d (%v)", again, err)
		}
	})
}

func feedHead(t *testing.T, f *fbFixture) int64 {
	t.Helper()
	head, err := f.db.EachLive(f.ctx, func(*engram.Memory) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// failingTx is a feedback's transaction with a crash in the middle of
// its credits: the request is given up once the first memories are
// written, so the feedback fails.
type failingTx struct {
	engram.FeedbackTx
	cancel context.CancelFunc
}

func (t failingTx) WriteCredits(ctx context.Context, w engram.CreditWrite) error {
	err := t.FeedbackTx.WriteCredits(ctx, w)
	t.cancel()
	return err
}

// TestFeedbackCrashLeavesNothing: a feedback that fails half-way through
// its credits leaves no trace — no memory moved, no event, no evidence,
// no reputation, no feedback row (its idempotency key is still free).
func TestFeedbackCrashLeavesNothing(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		a := f.memory(t, f.ctx, "The user's sailing boat is called Albatross", "life")
		b := f.memory(t, f.ctx, "The boat is moored in Kiel harbour", "life")
		rec := f.recallFor(t, "boat", a, b)
		head := feedHead(t, f)
		in := engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbUp, Rater: "r", IdempotencyKey: "once"}
		ctx, cancel := context.WithCancel(f.ctx)
		defer cancel()
		failing := f.workflow(t, ctx, in, func(tx engram.FeedbackTx) engram.FeedbackTx { return failingTx{tx, cancel} })
		if _, err := f.run(failing); !errors.Is(err, context.Canceled) {
			t.Fatalf("feedback cancelled mid-way: %v", err)
		}
		for _, m := range []*engram.Memory{a, b} {
			got := f.get(t, f.ctx, m.ID)
			evs, err := f.db.FindMemoryEvents(f.ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			help, err := f.db.MemoryHelpfulness(f.ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			help.OriginKey, help.FeatureKeys = "", nil // what the evidence was read by, not evidence
			if !sameLearned(got, m) || len(evs) != 1 || !reflect.DeepEqual(help, engram.HelpEvidence{}) {
				t.Errorf("%s after a failed feedback: %+v, %d events, evidence %+v", m.ID, got, len(evs), help)
			}
		}
		if changes, err := f.db.Changes(f.ctx, head, 10); err != nil || len(changes) != 0 {
			t.Errorf("feed after a failed feedback: %d changes (%v)", len(changes), err)
		}
		if reps, err := f.db.FindReputations(f.ctx, 10); err != nil || len(reps) != 0 {
			t.Errorf("reputations after a failed feedback: %+v (%v)", reps, err)
		}
		res, err := f.svc.SubmitFeedback(f.ctx, in)
		if err != nil || res.Replayed || len(res.Credited) != 2 {
			t.Fatalf("the same feedback again: %+v, %v", res, err)
		}
	})
}
