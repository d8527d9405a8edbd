package store_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// groupCase is a tenant holding the same three memories and one recall
// of them as every other groupCase of a test, so that one tenant can take
// feedbacks one by one and another the same feedbacks as one group.
type groupCase struct {
	ctx    context.Context
	mems   []*engram.Memory
	recall *engram.Recall
}

func newGroupCase(t *testing.T, f *fbFixture, tenant string) *groupCase {
	t.Helper()
	c := &groupCase{ctx: f.tenant(t, tenant)}
	for _, s := range []string{"The user's boat is called Albatross", "The boat is moored in Kiel", "The user sails on Sundays"} {
		c.mems = append(c.mems, f.memory(t, c.ctx, s, "life"))
	}
	// Scores apart, so that the memories rank alike in every case
	// whatever their ids.
	c.recall = &engram.Recall{Query: "boat", Route: engram.Route{Domains: []engram.DomainScore{{Name: "life", Score: 0.9}}},
		TokenBudget: 100, CreatedAt: time.Now()}
	for i, m := range c.mems {
		c.recall.Items = append(c.recall.Items, engram.RecallItem{ID: m.ID, Version: m.Version, Category: m.Category, Text: m.Content, Score: 0.9 - 0.3*float64(i)})
	}
	if err := f.db.SaveRecall(c.ctx, c.recall, "", ""); err != nil {
		t.Fatal(err)
	}
	return c
}

// index returns the position in c.mems of the memory id.
func (c *groupCase) index(id string) int {
	for i, m := range c.mems {
		if m.ID == id {
			return i
		}
	}
	return -1
}

// inputs are the group's feedbacks: a rater voting past its cap, an
// unknown recall (ENOTFOUND), an idempotency key repeated within the
// group with another thumb (a replay of the first), a vote on one memory,
// and a feedback whose request is given up half-way through its credits
// (failingTx), which must leave nothing. Each is the workflow the
// feedback service gives the store.
func (c *groupCase) inputs(t *testing.T, f *fbFixture) []store.GroupFeedback {
	ctx, cancel := context.WithCancel(c.ctx)
	up := func(rater, key string) engram.FeedbackInput {
		return engram.FeedbackInput{RecallID: c.recall.ID, Thumb: engram.ThumbUp, Rater: rater, IdempotencyKey: key}
	}
	down := up("r2", "")
	down.Thumb = engram.ThumbDown
	replay := up("r1", "once")
	replay.Thumb = engram.ThumbDown
	missing := up("r3", "")
	missing.RecallID = "rec_unknown"
	vote := engram.FeedbackInput{MemoryID: c.mems[1].ID, Thumb: engram.ThumbDown, Rater: "r4"}
	var out []store.GroupFeedback
	for _, in := range []engram.FeedbackInput{up("r1", "once"), up("r1", ""), missing, replay, down} {
		out = append(out, f.workflow(t, c.ctx, in, nil))
	}
	out = append(out, f.workflow(t, ctx, up("r5", "given-up"), func(tx engram.FeedbackTx) engram.FeedbackTx { return failingTx{tx, cancel} }))
	for _, in := range []engram.FeedbackInput{up("r1", ""), up("r1", ""), vote, up("r2", "")} {
		out = append(out, f.workflow(t, c.ctx, in, nil))
	}
	return out
}

// TestFeedbackGroupAsOneByOne: feedbacks written as one group answer,
// and leave the memories, events, helpfulness, totals and reputations,
// exactly as the same feedbacks written one by one: a failing member
// fails alone, a key repeated in the group is a replay, the rater's cap
// counts its earlier votes in the group, and each member sees the
// evidence and reputation its predecessors added.
func TestFeedbackGroupAsOneByOne(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		f.clock.set(time.Now().UTC().Truncate(time.Second))
		one, group := newGroupCase(t, f, "one"), newGroupCase(t, f, "group")
		var seqRes []*engram.FeedbackResult
		var seqErr []error
		for _, fb := range one.inputs(t, f) {
			res, err := f.run(fb)
			seqRes, seqErr = append(seqRes, res), append(seqErr, err)
		}
		grpRes, grpErr := f.db.SubmitFeedbackGroup(group.inputs(t, f))
		for i := range seqRes {
			if engram.ErrorCode(seqErr[i]) != engram.ErrorCode(grpErr[i]) || errors.Is(seqErr[i], context.Canceled) != errors.Is(grpErr[i], context.Canceled) {
				t.Errorf("feedback %d: one by one %v, in a group %v", i, seqErr[i], grpErr[i])
				continue
			}
			if seqErr[i] != nil {
				continue
			}
			s, g := seqRes[i], grpRes[i]
			if s.Replayed != g.Replayed || len(s.Credited) != len(g.Credited) || math.Abs(s.Signal-g.Signal) > 0 {
				t.Errorf("feedback %d: one by one %+v, in a group %+v", i, s, g)
				continue
			}
			for _, a := range s.Credited {
				for _, b := range g.Credited {
					if one.index(a.ID) == group.index(b.ID) && !closeCredit(a, b) {
						t.Errorf("feedback %d: one by one credited %+v, in a group %+v", i, a, b)
					}
				}
			}
		}
		if engram.ErrorCode(grpErr[2]) != engram.ENOTFOUND {
			t.Errorf("unknown recall in a group: %v", grpErr[2])
		}
		if grpErr[5] == nil || !errors.Is(grpErr[5], context.Canceled) {
			t.Errorf("a feedback given up in a group: %v", grpErr[5])
		}
		if grpRes[3] == nil || !grpRes[3].Replayed || grpRes[3].FeedbackID != grpRes[0].FeedbackID {
			t.Errorf("a key repeated in the group: %+v, first %+v", grpRes[3], grpRes[0])
		}
		for i := range one.mems {
			a, b := f.get(t, one.ctx, one.mems[i].ID), f.get(t, group.ctx, group.mems[i].ID)
			// Times aside: the policy's clock is the wall clock.
			if a.Version != b.Version || a.Reward != b.Reward || a.Confidence != b.Confidence || a.UpCount != b.UpCount ||
				a.DownCount != b.DownCount || a.Stability != b.Stability || a.NeedsRevision != b.NeedsRevision || a.Learned != b.Learned {
				t.Errorf("memory %d: one by one %+v, in a group %+v", i, a, b)
			}
			ha, err := f.db.MemoryHelpfulness(one.ctx, one.mems[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := f.db.MemoryHelpfulness(group.ctx, group.mems[i].ID)
			if err != nil {
				t.Fatal(err)
			}
			if !closeEvidence(ha, hb) {
				t.Errorf("memory %d evidence: one by one %+v, in a group %+v", i, ha, hb)
			}
			if ha.Answers.With.N == 0 {
				t.Errorf("memory %d: no judged answers counted: %+v", i, ha)
			}
		}
		ra, err := f.db.FindReputations(one.ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := f.db.FindReputations(group.ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ra) != len(rb) || len(ra) != 3 {
			t.Fatalf("reputations: one by one %d, in a group %d; want 3 raters", len(ra), len(rb))
		}
		for i := range ra {
			a, b := ra[i], rb[i]
			if a.Rater != b.Rater || a.Votes != b.Votes || math.Abs(a.Agree-b.Agree) > 1e-9 || math.Abs(a.Disagree-b.Disagree) > 1e-9 {
				t.Errorf("reputation %d: one by one %+v, in a group %+v", i, a, b)
			}
		}
		ca, err := f.db.Changes(one.ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		cb, err := f.db.Changes(group.ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(ca) != len(cb) {
			t.Errorf("changes: one by one %d, in a group %d", len(ca), len(cb))
		}
		for i := 1; i < len(cb); i++ {
			if cb[i].Seq != cb[i-1].Seq+1 {
				t.Errorf("the group's feed has a gap at %d: %d after %d", i, cb[i].Seq, cb[i-1].Seq)
			}
		}
		// The given-up feedback's key is free: it runs now.
		again := engram.FeedbackInput{RecallID: group.recall.ID, Thumb: engram.ThumbUp, Rater: "r5", IdempotencyKey: "given-up"}
		if res, err := f.svc.SubmitFeedback(group.ctx, again); err != nil || res.Replayed {
			t.Errorf("the given-up feedback again: %+v, %v", res, err)
		}
	})
}

func closeCredit(a, b engram.CreditedMemory) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9 }
	return a.Version == b.Version && a.Capped == b.Capped && a.UpCount == b.UpCount && a.DownCount == b.DownCount &&
		a.NeedsRevision == b.NeedsRevision && near(a.Weight, b.Weight) && near(a.Reward, b.Reward) &&
		near(a.Confidence, b.Confidence) && near(a.Stability, b.Stability)
}

func closeEvidence(a, b engram.HelpEvidence) bool {
	near := func(x, y engram.Helpfulness) bool {
		d := func(p, q float64) bool { return math.Abs(p-q) <= 1e-9 }
		return d(x.Good, y.Good) && d(x.Bad, y.Bad) && x.With.N == y.With.N && d(x.With.Sum, y.With.Sum) && d(x.With.Sq, y.With.Sq) &&
			x.Without.N == y.Without.N && d(x.Without.Sum, y.Without.Sum) && d(x.Without.Sq, y.Without.Sq)
	}
	return near(a.Memory, b.Memory) && near(a.Origin, b.Origin) && near(a.Origins, b.Origins) && near(a.Answers, b.Answers)
}

// TestFeedbackGroupsConcurrent: feedbacks sent at once, through the
// grouping of SubmitFeedback, each with its own rater and some sharing an
// idempotency key, are all answered once their group is committed: each
// key applies once (the others replay it), every applied feedback counts
// once in the tenant's totals and its rater's reputation, and the feed
// has no gap.
func TestFeedbackGroupsConcurrent(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		c := newGroupCase(t, f, "alpha")
		const n = 48
		results := make([]*engram.FeedbackResult, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				in := engram.FeedbackInput{RecallID: c.recall.ID, Thumb: engram.ThumbUp, Rater: fmt.Sprint("u", i)}
				switch {
				case i%5 == 0:
					in.RecallID = "rec_unknown"
				case i%4 == 0:
					in.IdempotencyKey = fmt.Sprint("key", i%16)
				}
				res, err := f.svc.SubmitFeedback(c.ctx, in)
				switch {
				case i%5 == 0:
					if engram.ErrorCode(err) != engram.ENOTFOUND {
						t.Errorf("feedback %d on an unknown recall: %v", i, err)
					}
				case err != nil:
					t.Errorf("feedback %d: %v", i, err)
				default:
					results[i] = res
				}
			})
		}
		wg.Wait()
		applied := map[string]bool{}
		for _, r := range results {
			if r != nil && !r.Replayed {
				applied[r.FeedbackID] = true
			}
		}
		replayed := 0
		for _, r := range results {
			if r != nil && r.Replayed {
				replayed++
				if !applied[r.FeedbackID] {
					t.Errorf("a replay of %s, which was not applied", r.FeedbackID)
				}
			}
		}
		// Every fifth names an unknown recall; of the others, every fourth
		// has a key, which repeats 16 apart.
		keyed := map[string]int{}
		plain := 0
		for i := range n {
			if i%5 == 0 {
				continue
			}
			if i%4 == 0 {
				keyed[fmt.Sprint("key", i%16)]++
			} else {
				plain++
			}
		}
		wantApplied, wantReplayed := plain+len(keyed), 0
		for _, k := range keyed {
			wantReplayed += k - 1
		}
		if len(applied) != wantApplied || replayed != wantReplayed || wantReplayed == 0 {
			t.Errorf("%d applied, %d replayed; want %d applied, %d replayed", len(applied), replayed, wantApplied, wantReplayed)
		}
		h, err := f.db.MemoryHelpfulness(c.ctx, c.mems[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if h.Answers.With.N != int64(wantApplied) || h.Memory.With.N != int64(wantApplied) {
			t.Errorf("totals count %d answers, the memory %d; want %d", h.Answers.With.N, h.Memory.With.N, wantApplied)
		}
		reps, err := f.db.FindReputations(c.ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		votes := int64(0)
		for _, r := range reps {
			votes += r.Votes
			if r.Votes != 1 {
				t.Errorf("rater %s: %d votes, want 1", r.Rater, r.Votes)
			}
		}
		if votes != int64(wantApplied) {
			t.Errorf("%d votes in the reputations, want %d", votes, wantApplied)
		}
		got := f.get(t, c.ctx, c.mems[0].ID)
		if got.UpCount != int64(wantApplied) || got.Version != c.mems[0].Version+int64(wantApplied) {
			t.Errorf("memory after %d applied feedbacks: up %d, version %d (from %d)", wantApplied, got.UpCount, got.Version, c.mems[0].Version)
		}
		changes, err := f.db.Changes(c.ctx, 0, 10000)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(changes); i++ {
			if changes[i].Seq != changes[i-1].Seq+1 {
				t.Fatalf("feed gap at %d: %d after %d", i, changes[i].Seq, changes[i-1].Seq)
			}
		}
	})
}

// panickingTx is a feedback's transaction with a bug in the workflow
// that uses it: writing the credits panics.
type panickingTx struct{ engram.FeedbackTx }

func (panickingTx) WriteCredits(context.Context, engram.CreditWrite) error {
	panic("credit bug")
}

// TestFeedbackGroupPanic: a feedback that panics half-way is answered
// with an error and leaves nothing; the tenant's later feedbacks are
// still written (its group does not stay taken).
func TestFeedbackGroupPanic(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		c := newGroupCase(t, f, "alpha")
		in := engram.FeedbackInput{RecallID: c.recall.ID, Thumb: engram.ThumbUp, Rater: "r", IdempotencyKey: "once"}
		panicking := f.workflow(t, c.ctx, in, func(tx engram.FeedbackTx) engram.FeedbackTx { return panickingTx{tx} })
		if _, err := f.run(panicking); err == nil {
			t.Fatal("a panicking feedback succeeded")
		}
		if got := f.get(t, c.ctx, c.mems[0].ID); got.Version != c.mems[0].Version {
			t.Errorf("a panicking feedback moved the memory to version %d", got.Version)
		}
		res, err := f.svc.SubmitFeedback(c.ctx, in)
		if err != nil || res.Replayed || len(res.Credited) != len(c.mems) {
			t.Fatalf("the same feedback after the panic: %+v, %v", res, err)
		}
	})
}
