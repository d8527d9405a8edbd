package store_test

import (
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestFindReputations: a tenant's raters, the one that contradicted the
// others first; another tenant's raters are not listed; a bad limit is
// refused.
func TestFindReputations(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		other := storetest.Tenant(t, db, "other")
		res, err := db.CreateMemory(ctx, &engram.Memory{Content: "the user drinks tea", Category: "preference"})
		if err != nil {
			t.Fatal(err)
		}
		fb := feedbackOn(t, db)
		for _, v := range []struct{ rater, thumb string }{{"ann", "up"}, {"bob", "up"}, {"cy", "up"}, {"troll", "down"}, {"troll", "down"}} {
			rec := saveRecall(t, ctx, db, res.Memory)
			if _, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: v.thumb, Rater: v.rater}); err != nil {
				t.Fatal(err)
			}
		}
		reps, err := db.FindReputations(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(reps) != 4 || !strings.HasSuffix(reps[0].Rater, "troll") || reps[0].Votes != 2 || reps[0].Disagree <= reps[0].Agree {
			t.Fatalf("reputations %+v, want troll first with 2 votes, disagreeing", reps)
		}
		if got, err := db.FindReputations(other, 10); err != nil || len(got) != 0 {
			t.Errorf("another tenant's raters: %v %v", got, err)
		}
		if _, err := db.FindReputations(ctx, 0); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("limit 0: %v, want EINVALID", err)
		}
	})
}

// TestReputationCorrections: once a user's correction superseded a
// memory, a thumb up on an answer that still rested on it disagrees with
// that correction, and a thumb down agrees.
func TestReputationCorrections(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		res, err := db.CreateMemory(ctx, &engram.Memory{Content: "the user drinks tea with milk", Category: "preference"})
		if err != nil {
			t.Fatal(err)
		}
		fb := feedbackOn(t, db)
		in, err := fb.CreateInteraction(ctx, &engram.Interaction{Prompt: "How does the user take tea?", Response: "With milk.",
			RecallID: saveRecall(t, ctx, db, res.Memory).ID})
		if err != nil {
			t.Fatal(err)
		}
		out, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{InteractionID: in.ID, Thumb: engram.ThumbDown,
			Correction: "the user drinks tea without milk", Rater: "ada"})
		if err != nil || out.Knowledge == nil || len(out.Knowledge.Superseded) != 1 {
			t.Fatalf("correction: %+v %v, want the memory superseded", out, err)
		}
		for _, v := range []struct{ rater, thumb string }{{"fan", "up"}, {"critic", "down"}} {
			rec := saveRecall(t, ctx, db, res.Memory)
			if _, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: v.thumb, Rater: v.rater}); err != nil {
				t.Fatal(err)
			}
		}
		reps, err := db.FindReputations(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		byRater := map[string]engram.Reputation{}
		for _, r := range reps {
			byRater[r.Rater[strings.LastIndex(r.Rater, "/")+1:]] = r.Reputation
		}
		if fan := byRater["fan"]; !(fan.Disagree > 0.5) || fan.Agree != 0 {
			t.Errorf("thumb up on a corrected memory: %+v, want a disagreement", fan)
		}
		if critic := byRater["critic"]; !(critic.Agree > 0.5) || critic.Disagree != 0 {
			t.Errorf("thumb down on a corrected memory: %+v, want an agreement", critic)
		}
	})
}
