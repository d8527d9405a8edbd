package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// feedbackOn wires the feedback service onto db as cmd/engram does.
func feedbackOn(t *testing.T, db *store.DB) *learning.Feedback {
	t.Helper()
	scoring := learning.NewScoreConfig(configs.Default().Scoring)
	return learning.NewFeedback(db, learning.NewScorer(scoring, time.Now), engram.DefaultFeedbackConfig())
}

// saveRecall stores a recall that injected m.
func saveRecall(t *testing.T, ctx context.Context, db *store.DB, m *engram.Memory) *engram.Recall {
	t.Helper()
	r := &engram.Recall{Query: "q", TokenBudget: 100, CreatedAt: time.Now(),
		Items: []engram.RecallItem{{ID: m.ID, Version: m.Version, Category: m.Category, Text: m.Content, Score: 0.5}}}
	if err := db.SaveRecall(ctx, r, "", ""); err != nil {
		t.Fatal(err)
	}
	return r
}

// queuedRecall opens a store whose recall writer flushes only hourly and
// saves a recall of one new memory in tenant alpha: the recall's record
// stays in the writer's batch.
func queuedRecall(t *testing.T, engine string) (*store.DB, context.Context, *engram.CreateResult, *engram.Recall) {
	t.Helper()
	o := storetest.Options(t, engine)
	o.RecallFlush = time.Hour
	db := storetest.OpenWith(t, o)
	ctx := engram.NewContextWithActor(storetest.Tenant(t, db, "alpha"), engram.Actor{KeyID: "k"})
	res, err := db.CreateMemory(ctx, &engram.Memory{Content: "the user drinks tea", Category: "preference"})
	if err != nil {
		t.Fatal(err)
	}
	return db, ctx, res, saveRecall(t, ctx, db, res.Memory)
}

func getMemory(t *testing.T, ctx context.Context, db *store.DB, id string) *engram.Memory {
	t.Helper()
	m, err := db.FindMemoryByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRecallWriterFeedbackFindsBatchedRecall: a recall is acknowledged
// before its record commits; feedback on it, on the same server, writes
// the queued record in its own transaction (the flush interval here is
// an hour) and credits it; the batch later adds the access count and
// does not write the record twice.
func TestRecallWriterFeedbackFindsBatchedRecall(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db, ctx, res, rec := queuedRecall(t, engine)
		if m := getMemory(t, ctx, db, res.Memory.ID); m.AccessCount != 0 {
			t.Fatalf("access counted before the batch committed: %d", m.AccessCount)
		}
		start := time.Now()
		fb, err := feedbackOn(t, db).SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: "up"})
		if err != nil {
			t.Fatalf("feedback on a batched recall: %v", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("feedback waited %v for the batch", took)
		}
		if len(fb.Credited) != 1 || fb.Credited[0].ID != res.Memory.ID {
			t.Errorf("credited %+v", fb.Credited)
		}
		if err := db.FlushRecalls(ctx); err != nil {
			t.Fatal(err)
		}
		if m := getMemory(t, ctx, db, res.Memory.ID); m.AccessCount != 1 || m.LastAccessedAt == nil || m.ReinforcedAt.Before(res.Memory.ReinforcedAt) {
			t.Errorf("after the batch: access_count %d, last_accessed_at %v", m.AccessCount, m.LastAccessedAt)
		}
		// An interaction naming a batched recall finds it too.
		rec2 := saveRecall(t, ctx, db, res.Memory)
		if _, err := feedbackOn(t, db).CreateInteraction(ctx, &engram.Interaction{Prompt: "p", Response: "r", RecallID: rec2.ID}); err != nil {
			t.Fatalf("interaction on a batched recall: %v", err)
		}
	})
}

// TestRecallWriterTwoServers: two servers on one database. Feedback
// through server 2 on a recall just made by server 1, whose batch has
// not committed yet, waits for it and credits it. An id of a recall
// that never reaches the store is a 404 once its grace has passed, and
// an id that carries no recent time is a 404 at once.
func TestRecallWriterTwoServers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.RecallFlush = 300 * time.Millisecond
		o.RecallGrace = 2 * time.Second
		db1 := storetest.OpenWith(t, o)
		o2 := o
		o2.RecallFlush = time.Hour
		db2 := storetest.OpenWith(t, o2)
		ctx1 := engram.NewContextWithActor(storetest.Tenant(t, db1, "alpha"), engram.Actor{KeyID: "k"})
		ctx2 := engram.NewContextWithActor(storetest.Tenant(t, db2, "alpha"), engram.Actor{KeyID: "k"})
		res, err := db1.CreateMemory(ctx1, &engram.Memory{Content: "the user drinks tea", Category: "preference"})
		if err != nil {
			t.Fatal(err)
		}
		rec := saveRecall(t, ctx1, db1, res.Memory)
		fb, err := feedbackOn(t, db2).SubmitFeedback(ctx2, engram.FeedbackInput{RecallID: rec.ID, Thumb: "up"})
		if err != nil {
			t.Fatalf("feedback on server 2 to a recall of server 1: %v", err)
		}
		if len(fb.Credited) != 1 {
			t.Errorf("credited %+v", fb.Credited)
		}

		// Server 2 holds this one for an hour: server 1 gives up after
		// the grace period.
		lost := saveRecall(t, ctx2, db2, res.Memory)
		start := time.Now()
		_, err = feedbackOn(t, db1).SubmitFeedback(ctx1, engram.FeedbackInput{RecallID: lost.ID, Thumb: "up"})
		if engram.ErrorCode(err) != engram.ENOTFOUND {
			t.Errorf("feedback on a recall not in the store: %v", err)
		}
		if took := time.Since(start); took < 2*time.Second || took > 10*time.Second {
			t.Errorf("waited %v for a fresh recall id", took)
		}
		start = time.Now()
		_, err = feedbackOn(t, db1).SubmitFeedback(ctx1, engram.FeedbackInput{RecallID: "rec_aaaaaaaaaaaaaaaaaaaa", Thumb: "up"})
		if engram.ErrorCode(err) != engram.ENOTFOUND || time.Since(start) > time.Second {
			t.Errorf("unknown recall id: %v after %v", err, time.Since(start))
		}
	})
}

// TestRecallWriterAccessFlush: a batch commits its recall records at
// once, but adds the access counts of its memories only every
// AccessFlush: another server finds the recall (an interaction naming it
// succeeds) while the memory's count is still 0; forcing a flush adds it,
// and so does the writer by itself once the access flush is due.
func TestRecallWriterAccessFlush(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.RecallFlush = time.Millisecond
		o.AccessFlush = time.Hour
		db := storetest.OpenWith(t, o)
		o2 := o
		o2.AccessFlush = 0
		db2 := storetest.OpenWith(t, o2)
		ctx := engram.NewContextWithActor(storetest.Tenant(t, db, "alpha"), engram.Actor{KeyID: "k"})
		ctx2 := engram.NewContextWithActor(storetest.Tenant(t, db2, "alpha"), engram.Actor{KeyID: "k"})
		res, err := db.CreateMemory(ctx, &engram.Memory{Content: "the user drinks tea", Category: "preference"})
		if err != nil {
			t.Fatal(err)
		}
		rec := saveRecall(t, ctx, db, res.Memory)
		if _, err := feedbackOn(t, db2).CreateInteraction(ctx2, &engram.Interaction{Prompt: "p", Response: "r", RecallID: rec.ID}); err != nil {
			t.Fatalf("interaction on server 2 naming a committed recall of server 1: %v", err)
		}
		if m := getMemory(t, ctx2, db2, res.Memory.ID); m.AccessCount != 0 {
			t.Errorf("access counted with the recall's batch, before the access flush: %d", m.AccessCount)
		}
		if err := db.FlushRecalls(ctx); err != nil {
			t.Fatal(err)
		}
		if m := getMemory(t, ctx2, db2, res.Memory.ID); m.AccessCount != 1 || m.LastAccessedAt == nil {
			t.Errorf("after a forced flush: access_count %d, last_accessed_at %v", m.AccessCount, m.LastAccessedAt)
		}

		// Server 2 adds its counts by itself, within a second or so.
		saveRecall(t, ctx2, db2, res.Memory)
		deadline := time.Now().Add(30 * time.Second)
		for getMemory(t, ctx2, db2, res.Memory.ID).AccessCount != 2 {
			if time.Now().After(deadline) {
				t.Fatalf("access count not added by the writer: %d", getMemory(t, ctx2, db2, res.Memory.ID).AccessCount)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestRecallWriterCloseCommits: closing the store commits what is
// still batched; a reopened store finds the recall and its access.
func TestRecallWriterCloseCommits(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		o.RecallFlush = time.Hour
		db, err := store.Open(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		ctx := engram.NewContextWithActor(storetest.Tenant(t, db, "alpha"), engram.Actor{KeyID: "k"})
		res, err := db.CreateMemory(ctx, &engram.Memory{Content: "the user drinks tea", Category: "preference"})
		if err != nil {
			t.Fatal(err)
		}
		var recs []*engram.Recall
		for range 3 {
			recs = append(recs, saveRecall(t, ctx, db, res.Memory))
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = storetest.OpenWith(t, o)
		if m := getMemory(t, ctx, db, res.Memory.ID); m.AccessCount != 3 || m.Version != res.Memory.Version {
			t.Errorf("after close: access_count %d, version %d", m.AccessCount, m.Version)
		}
		for _, r := range recs {
			if _, err := feedbackOn(t, db).SubmitFeedback(ctx, engram.FeedbackInput{RecallID: r.ID, Rating: 4, Rater: r.ID}); err != nil {
				t.Errorf("recall %s after close: %v", r.ID, err)
			}
		}
	})
}

// TestRecallWriterFailedClaim: a feedback takes its recall's record out
// of the batch to write it itself; when its transaction never commits
// (here its context is cancelled), the writer still writes the record,
// so a later feedback finds the recall.
func TestRecallWriterFailedClaim(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db, ctx, _, rec := queuedRecall(t, engine)
		dead, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := feedbackOn(t, db).SubmitFeedback(dead, engram.FeedbackInput{RecallID: rec.ID, Thumb: "up"}); err == nil {
			t.Fatal("feedback with a cancelled context succeeded")
		}
		if err := db.FlushRecalls(ctx); err != nil {
			t.Fatal(err)
		}
		fb, err := feedbackOn(t, db).SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: "up"})
		if err != nil {
			t.Fatalf("feedback after a failed claim: %v", err)
		}
		if len(fb.Credited) != 1 {
			t.Errorf("credited %+v", fb.Credited)
		}
	})
}

// TestRecallArmsNotAccessed: the memory exploration held back and the
// record of a kind probe's control arm are kept with the recall, for its
// feedback, but neither is an injection: no access is counted for them,
// and feedback reads them as the recall's arms, on both engines.
func TestRecallArmsNotAccessed(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "arms")
		var ids []*engram.Memory
		for _, c := range []string{"Shown: the deploy window opens at nine", "Held back: rollbacks need two approvals", "Probed: Keywords: deploy, rollback"} {
			res, err := db.CreateMemory(ctx, &engram.Memory{Content: c, Category: "work"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.Memory)
		}
		shown, held, probed := ids[0], ids[1], ids[2]
		r := &engram.Recall{Query: "deploy", TokenBudget: 100, CreatedAt: time.Now(),
			Items:    []engram.RecallItem{{ID: shown.ID, Version: shown.Version, Score: 0.5}},
			HeldBack: &engram.RecallItem{ID: held.ID, Version: held.Version, Score: 0.4},
			Probe:    &engram.RecallItem{ID: probed.ID, Version: probed.Version, Score: 0.1}}
		if err := db.SaveRecall(ctx, r, "", ""); err != nil {
			t.Fatal(err)
		}
		if err := db.FlushRecalls(ctx); err != nil {
			t.Fatal(err)
		}
		for _, m := range ids {
			want := int64(0)
			if m == shown {
				want = 1
			}
			if got := getMemory(t, ctx, db, m.ID).AccessCount; got != want {
				t.Errorf("%q: access_count %d, want %d", m.Content, got, want)
			}
		}
		if _, err := db.RunFeedback(ctx, r.ID, "r", func(ctx context.Context, tx engram.FeedbackTx) (*engram.FeedbackResult, error) {
			rs, err := tx.FindRecallScores(ctx, r.ID)
			if err != nil {
				return nil, err
			}
			if len(rs.Scores) != 1 || rs.HeldBack != held.ID || rs.Probe != probed.ID || rs.ProbeIn || len(rs.Injected) != 1 {
				t.Errorf("recall scores %+v: want one injected memory, the held-back one and the probe's control arm", rs)
			}
			return &engram.FeedbackResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}
