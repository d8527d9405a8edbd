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
