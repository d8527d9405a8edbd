package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store/storetest"
)

func TestConsoleSessions(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := context.Background()
		ten, err := db.EnsureTenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		key, _, err := db.CreateAPIKey(ctx, "acme", "console")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		s := &engram.ConsoleSession{ID: "h1", KeyID: key.ID, HomeTenantID: ten.ID, TenantID: ten.ID, CSRF: "c1",
			CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
		if err := db.CreateConsoleSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		got, err := db.FindConsoleSession(ctx, "h1", now)
		if err != nil || got.CSRF != "c1" || got.TenantID != ten.ID || got.KeyID != key.ID {
			t.Fatalf("find: %+v, %v", got, err)
		}
		if _, err := db.FindConsoleSession(ctx, "h1", now.Add(2*time.Hour)); engram.ErrorCode(err) != engram.EUNAUTHORIZED {
			t.Errorf("an expired session: %v, want unauthorized", err)
		}
		if _, err := db.FindConsoleSession(ctx, "nope", now); engram.ErrorCode(err) != engram.EUNAUTHORIZED {
			t.Errorf("an unknown session: %v", err)
		}
		if err := db.SetConsoleTenant(ctx, "nope", ten.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("switching an unknown session: %v", err)
		}
		// A later sign-in drops the sessions that expired by then.
		later := &engram.ConsoleSession{ID: "h2", KeyID: key.ID, HomeTenantID: ten.ID, TenantID: ten.ID, CSRF: "c2",
			CreatedAt: now.Add(2 * time.Hour), ExpiresAt: now.Add(3 * time.Hour)}
		if err := db.CreateConsoleSession(ctx, later); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindConsoleSession(ctx, "h1", now); engram.ErrorCode(err) != engram.EUNAUTHORIZED {
			t.Errorf("an expired session survived a later sign-in: %v", err)
		}
		if err := db.DeleteConsoleSession(ctx, "h2"); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteConsoleSession(ctx, "h2"); err != nil {
			t.Errorf("ending an ended session: %v", err)
		}
	})
}

func TestConsoleInsights(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		other := storetest.Tenant(t, db, "other")
		cfg := configs.Default()
		fb := learning.NewFeedback(db, learning.NewScorer(learning.NewScoreConfig(cfg.Scoring), time.Now), cfg.Feedback)
		mk := func(content, category string) *engram.Memory {
			res, err := db.CreateMemory(ctx, &engram.Memory{Content: content, Category: category})
			if err != nil {
				t.Fatal(err)
			}
			return res.Memory
		}
		good, bad := mk("the good one", "work"), mk("the bad one", "work")
		life := mk("a life fact", "life")
		gone, shelved := mk("deleted later", "life"), mk("archived later", "life")
		flagged := mk("needs a look", "strategy")
		if _, err := db.DeleteMemory(ctx, gone.ID, nil); err != nil {
			t.Fatal(err)
		}
		yes := true
		if _, err := db.UpdateMemory(ctx, shelved.ID, engram.MemoryUpdate{Archived: &yes}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UpdateMemory(ctx, flagged.ID, engram.MemoryUpdate{NeedsRevision: &yes}); err != nil {
			t.Fatal(err)
		}
		for _, in := range []engram.FeedbackInput{
			{MemoryID: good.ID, Thumb: engram.ThumbUp, Rater: "ann"},
			{MemoryID: good.ID, Rating: 5, Rater: "bob"},
			{MemoryID: bad.ID, Thumb: engram.ThumbDown, Rater: "ann"},
			{MemoryID: life.ID, Rating: 3, Rater: "ann"},
		} {
			if _, err := fb.SubmitFeedback(ctx, in); err != nil {
				t.Fatal(err)
			}
		}

		st, err := db.TenantStats(ctx, time.Now().Add(-6*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if st.Live != 4 || st.Archived != 1 || st.Tombstoned != 1 || st.NeedsRevision != 1 || st.Reflections != 0 {
			t.Errorf("stats %+v", st)
		}
		if len(st.Categories) != 3 || st.Categories[0] != (engram.CategoryCount{Category: "work", Count: 2}) {
			t.Errorf("categories %+v", st.Categories)
		}
		var binned int64
		for _, n := range st.RewardBins {
			binned += n
		}
		if binned != st.Live {
			t.Errorf("reward bins hold %d of %d live memories", binned, st.Live)
		}
		for _, m := range []*engram.Memory{good, bad} {
			cur, err := db.FindMemoryByID(ctx, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if i := min(int((cur.Reward+1)*5), 9); st.RewardBins[i] == 0 {
				t.Errorf("reward %.3f is not in bin %d: %v", cur.Reward, i, st.RewardBins)
			}
		}
		if len(st.Days) != 7 {
			t.Fatalf("%d days, want 7", len(st.Days))
		}
		if today := st.Days[6]; today.Up != 2 || today.Down != 1 {
			t.Errorf("today %+v: want 2 up and 1 down (a 3-star rating is neutral)", today)
		}

		recs, err := db.FindFeedback(ctx, engram.FeedbackFilter{Limit: 3})
		if err != nil || len(recs) != 3 || recs[0].MemoryID != life.ID || recs[2].MemoryID != good.ID {
			t.Fatalf("feedback page: %v %v", recs, err)
		}
		older, err := db.FindFeedback(ctx, engram.FeedbackFilter{Before: recs[2].Seq, Limit: 3})
		if err != nil || len(older) != 1 || older[0].Rater == "" || older[0].Thumb != engram.ThumbUp {
			t.Errorf("older feedback: %+v %v", older, err)
		}
		if _, err := db.FindFeedback(ctx, engram.FeedbackFilter{}); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("limit 0: %v", err)
		}
		if _, err := db.FindFeedback(ctx, engram.FeedbackFilter{Limit: 3, Signal: "sideways"}); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("bad signal: %v", err)
		}
		downs, err := db.FindFeedback(ctx, engram.FeedbackFilter{Limit: 10, Signal: engram.ThumbDown})
		if err != nil || len(downs) != 1 || downs[0].MemoryID != bad.ID || downs[0].Result == nil {
			t.Errorf("down feedback: %+v %v", downs, err)
		}
		byMem, err := db.FindFeedback(ctx, engram.FeedbackFilter{Limit: 10, MemoryID: good.ID})
		if err != nil || len(byMem) != 2 {
			t.Errorf("feedback on %s: %d records, %v", good.ID, len(byMem), err)
		}
		if none, err := db.FindFeedback(ctx, engram.FeedbackFilter{Limit: 10, Query: "100%_no-such"}); err != nil || len(none) != 0 {
			t.Errorf("search for nothing: %+v %v", none, err)
		}
		if later, err := db.FindFeedback(ctx, engram.FeedbackFilter{Limit: 10, Since: time.Now().Add(time.Hour)}); err != nil || len(later) != 0 {
			t.Errorf("feedback since an hour ahead: %+v %v", later, err)
		}

		up, down, err := db.MemoryMovements(ctx, time.Now().Add(-7*24*time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(up) != 1 || up[0].Memory.ID != good.ID || up[0].Up != 2 || up[0].Raters != 2 || up[0].Net != 2 {
			t.Errorf("promoted %+v", up)
		}
		if len(down) != 1 || down[0].Memory.ID != bad.ID || down[0].Down != 1 || down[0].Net != -1 {
			t.Errorf("demoted %+v", down)
		}
		if up, down, _ := db.MemoryMovements(ctx, time.Now().Add(time.Hour), 10); len(up)+len(down) != 0 {
			t.Error("movements after the window's start")
		}

		ost, err := db.TenantStats(other, time.Now())
		if err != nil || ost.Live != 0 || len(ost.Categories) != 0 || ost.Days[0].Up != 0 {
			t.Errorf("another tenant sees %+v", ost)
		}
		if recs, _ := db.FindFeedback(other, engram.FeedbackFilter{Limit: 10}); len(recs) != 0 {
			t.Error("another tenant sees the feedback")
		}

		// Citations match the whole id: LIKE's wildcards in an id match
		// themselves only.
		if _, _, err := db.SaveReflection(ctx, &engram.Reflection{Group: "work", Category: "work", Title: "Work",
			Markdown: "x", Writer: "extractive", Fingerprint: "f", Cited: []engram.MemoryRef{{ID: good.ID, Version: 1}},
			Members: []engram.MemoryRef{{ID: good.ID, Version: 1}}}); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]int{good.ID: 1, good.ID[:len(good.ID)-1]: 0, "mem%": 0, bad.ID: 0} {
			got, err := db.FindReflectionsCiting(ctx, id)
			if err != nil || len(got) != want {
				t.Errorf("reflections citing %q: %d, want %d (%v)", id, len(got), want, err)
			}
		}
		if got, _ := db.FindReflectionsCiting(other, good.ID); len(got) != 0 {
			t.Error("another tenant sees the citing reflection")
		}
	})
}
