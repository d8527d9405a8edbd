package store_test

import (
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// TestFeedbackGroupCorrectionAfterCredits: in one group, thumbs credit a
// recall's memories, then a correction of an answer on that recall credits
// them again and supersedes them, then more thumbs credit them: the group
// leaves every memory (version, learned fields, superseded_by) and the
// rater's cap as the same feedbacks one by one, and each version moved by
// exactly one event.
func TestFeedbackGroupCorrectionAfterCredits(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		f.clock.set(time.Now().UTC().Truncate(time.Second))
		one, group := newGroupCase(t, f, "one"), newGroupCase(t, f, "group")
		inputs := func(c *groupCase) []store.GroupFeedback {
			a := f.interaction(t, c.ctx, engram.Interaction{SessionID: "s", TurnID: "t", Prompt: "boat?", Response: "Seagull", RecallID: c.recall.ID})
			var out []store.GroupFeedback
			for _, in := range []engram.FeedbackInput{
				{RecallID: c.recall.ID, Thumb: engram.ThumbUp, Rater: "r1"},
				{RecallID: c.recall.ID, Thumb: engram.ThumbUp, Rater: "r1"},
				{InteractionID: a.ID, Thumb: engram.ThumbDown, Rater: "r2", Correction: "The user's boat is called Seagull"},
				{RecallID: c.recall.ID, Thumb: engram.ThumbUp, Rater: "r1"},
				{RecallID: c.recall.ID, Thumb: engram.ThumbDown, Rater: "r3"},
			} {
				out = append(out, f.workflow(t, c.ctx, in, nil))
			}
			return out
		}
		var seq []*engram.FeedbackResult
		for _, fb := range inputs(one) {
			res, err := f.run(fb)
			if err != nil {
				t.Fatal(err)
			}
			seq = append(seq, res)
		}
		grp, errs := f.db.SubmitFeedbackGroup(inputs(group))
		for i, err := range errs {
			if err != nil {
				t.Fatalf("feedback %d in a group: %v", i, err)
			}
			if len(seq[i].Credited) != len(grp[i].Credited) {
				t.Errorf("feedback %d: one by one %+v, in a group %+v", i, seq[i], grp[i])
			}
			for _, a := range seq[i].Credited {
				for _, b := range grp[i].Credited {
					if one.index(a.ID) == group.index(b.ID) && !closeCredit(a, b) {
						t.Errorf("feedback %d: one by one credited %+v, in a group %+v", i, a, b)
					}
				}
			}
		}
		if k, g := seq[2].Knowledge, grp[2].Knowledge; k == nil || g == nil || len(k.Superseded) == 0 || len(k.Superseded) != len(g.Superseded) {
			t.Fatalf("correction: one by one %+v, in a group %+v", k, g)
		}
		for i := range one.mems {
			a, b := f.get(t, one.ctx, one.mems[i].ID), f.get(t, group.ctx, group.mems[i].ID)
			if a.Version != b.Version || a.Reward != b.Reward || a.Confidence != b.Confidence || a.UpCount != b.UpCount ||
				a.DownCount != b.DownCount || a.NeedsRevision != b.NeedsRevision || (a.SupersededBy == "") != (b.SupersededBy == "") {
				t.Errorf("memory %d: one by one %+v, in a group %+v", i, a, b)
			}
			hist, err := f.db.FindMemoryEvents(group.ctx, b.ID)
			if err != nil {
				t.Fatal(err)
			}
			for k := 1; k < len(hist); k++ {
				if hist[k].Version != hist[k-1].Version+1 {
					t.Errorf("memory %d: event versions %d then %d", i, hist[k-1].Version, hist[k].Version)
				}
			}
			if n := len(hist); n == 0 || hist[n-1].Version != b.Version {
				t.Errorf("memory %d at version %d: %d events", i, b.Version, n)
			}
		}
	})
}
