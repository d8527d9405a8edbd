package learning_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store/storetest"
)

// TestFeedbackPolicyInLearning: what a feedback does is decided by the
// learning package alone, over an unchanged store. The same rater's five
// up votes on one memory move it as often as the cap in learning's
// configuration allows (1, 3, or all five with a cap of 10), and a
// shorter window lets the capped votes count again once it has passed.
func TestFeedbackPolicyInLearning(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		for _, tt := range []struct {
			limit   int
			window  time.Duration
			applied int64
		}{
			{1, 24 * time.Hour, 1},
			{3, 24 * time.Hour, 3},
			{10, 24 * time.Hour, 5},
			{1, time.Nanosecond, 5},
		} {
			ctx := storetest.Tenant(t, db, fmt.Sprintf("cap-%d-%d", tt.limit, tt.window))
			res, err := db.CreateMemory(ctx, &engram.Memory{Content: "The user's boat is called Albatross", Category: engram.CategoryLife})
			if err != nil {
				t.Fatal(err)
			}
			cfg := engram.DefaultFeedbackConfig()
			cfg.RaterCap, cfg.RaterWindow = tt.limit, tt.window
			fb := learning.NewFeedback(db, learning.NewScorer(learning.DefaultScoreConfig(), nil), cfg)
			capped := 0
			for range 5 {
				out, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{MemoryID: res.Memory.ID, Thumb: engram.ThumbUp, Rater: "r"})
				if err != nil {
					t.Fatal(err)
				}
				if out.Credited[0].Capped {
					capped++
				}
			}
			m, err := db.FindMemoryByID(ctx, res.Memory.ID)
			if err != nil {
				t.Fatal(err)
			}
			if m.UpCount != tt.applied || int64(capped) != 5-tt.applied || m.Version != 1+tt.applied {
				t.Errorf("cap %d per %s: up %d, %d capped, version %d; want %d applied", tt.limit, tt.window, m.UpCount, capped,
					m.Version, tt.applied)
			}
		}
	})
}
