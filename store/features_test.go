package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// featureScorer scores with the default configuration.
func featureScorer() *learning.Scorer {
	return learning.NewScorer(learning.NewScoreConfig(configs.Default().Scoring), time.Now)
}

// judgeKinds stores n keyword lists and n plain sentences and has fresh
// raters (prefix) judge one recall of each: lists down, sentences up.
func judgeKinds(t *testing.T, ctx context.Context, db *store.DB, n int, prefix string) {
	t.Helper()
	fb := feedbackOn(t, db)
	for i := range n {
		for _, v := range []struct{ content, thumb string }{
			{fmt.Sprintf("Keywords: tea%d, milk, sugar, kettle", i), engram.ThumbDown},
			{fmt.Sprintf("The user moved to Lisbon in spring %d and works as a nurse there.", 2000+i), engram.ThumbUp},
		} {
			res, err := db.CreateMemory(ctx, &engram.Memory{Content: v.content, Category: "life", Type: "dialog_turn"})
			if err != nil {
				t.Fatal(err)
			}
			rec := saveRecall(t, ctx, db, res.Memory)
			if _, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: v.thumb,
				Rater: fmt.Sprintf("%s%d", prefix, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// featureOf returns the helpfulness evidence of a fresh, never judged
// memory of content as db reads it, and its feature factor.
func featureOf(t *testing.T, ctx context.Context, db *store.DB, content string) (engram.HelpEvidence, float64) {
	t.Helper()
	res, err := db.CreateMemory(ctx, &engram.Memory{Content: content, Category: "life", Type: "dialog_turn"})
	if err != nil {
		t.Fatal(err)
	}
	help, err := db.FindHelpfulness(ctx, []*engram.Memory{res.Memory})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := featureScorer().Features(help[res.Memory.ID])
	return help[res.Memory.ID], f
}

// TestLearnedFeaturesShared: what one server's feedback teaches the
// feature model (keyword lists mislead, sentences help) is what a second
// server on the same database reads, and a restart keeps it: a keyword
// list nobody judged sinks on both, a sentence keeps its score, and the
// breakdown names the list's shape among the features that moved it.
func TestLearnedFeaturesShared(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		a := storetest.OpenWith(t, o)
		b := storetest.OpenWith(t, o)
		ctxA := storetest.Tenant(t, a, "acme")
		ctxB := storetest.Tenant(t, b, "acme")
		judgeKinds(t, ctxA, a, 30, "user")
		check := func(name string, ctx context.Context, db *store.DB) {
			t.Helper()
			e, list := featureOf(t, ctx, db, "Keywords: coffee, beans, roast, grinder")
			_, sentence := featureOf(t, ctx, db, "The user adopted a cat called Miso in 2019 and walks it daily.")
			_, top := featureScorer().Features(e)
			named := false
			for _, f := range top {
				named = named || (f.Feature == engram.FeaturePrefix+"shape=list" && f.Weight < 0)
			}
			if !(list < 0.7) || sentence != 1 || !named {
				t.Errorf("%s: unjudged list factor %.3f (want < 0.7), sentence %.3f (want 1), top features %+v", name, list, sentence, top)
			}
		}
		check("first server", ctxA, a)
		check("second server", ctxB, b)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		c := storetest.OpenWith(t, o)
		check("after a restart", storetest.Tenant(t, c, "acme"), c)
	})
}

// TestLearnedFeaturesRaterWeight: the same thumbs down on keyword lists
// add less to the model's evidence against lists from a rater whose
// votes kept contradicting everyone else's than from raters in good
// standing.
func TestLearnedFeaturesRaterWeight(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		fb := feedbackOn(t, db)
		listBad := func(tenant string, hostile bool) float64 {
			ctx := storetest.Tenant(t, db, tenant)
			// Sentences the others find good; the hostile rater says otherwise.
			for i := range 8 {
				res, err := db.CreateMemory(ctx, &engram.Memory{Content: fmt.Sprintf("The user's sister lives in Porto since %d.", 1990+i),
					Category: "life", Type: "dialog_turn"})
				if err != nil {
					t.Fatal(err)
				}
				for j := range 3 {
					rec := saveRecall(t, ctx, db, res.Memory)
					if _, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbUp,
						Rater: fmt.Sprintf("fan%d-%d", i, j)}); err != nil {
						t.Fatal(err)
					}
				}
				if hostile {
					rec := saveRecall(t, ctx, db, res.Memory)
					if _, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbDown, Rater: "troll"}); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i := range 6 {
				res, err := db.CreateMemory(ctx, &engram.Memory{Content: fmt.Sprintf("Keywords: tea%d, milk, sugar, kettle", i),
					Category: "life", Type: "dialog_turn"})
				if err != nil {
					t.Fatal(err)
				}
				rater := "troll"
				if !hostile {
					rater = fmt.Sprintf("critic%d", i)
				}
				rec := saveRecall(t, ctx, db, res.Memory)
				if _, err := fb.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbDown, Rater: rater}); err != nil {
					t.Fatal(err)
				}
			}
			e, _ := featureOf(t, ctx, db, "Keywords: coffee, beans, roast, grinder")
			return e.Features[engram.FeaturePrefix+"shape=list"].Bad
		}
		honest, hostile := listBad("honest", false), listBad("hostile", true)
		if !(hostile < 0.8*honest) || honest <= 0 {
			t.Errorf("evidence against lists: %.3f from a hostile rater, %.3f from honest ones; want clearly less", hostile, honest)
		}
	})
}

// TestRetiredFeaturesLeftOut: evidence a store learned under a feature
// Memory.Features no longer names (the category) stays in its rows, but
// the learned model's listing leaves it out, on both engines.
func TestRetiredFeaturesLeftOut(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		res, err := db.CreateMemory(ctx, &engram.Memory{Content: "Keywords: tea, milk, sugar, kettle", Category: "life"})
		if err != nil {
			t.Fatal(err)
		}
		rec := saveRecall(t, ctx, db, res.Memory)
		category := engram.FeaturePrefix + "category=life"
		list := engram.FeaturePrefix + "shape=list"
		if _, err := db.RunFeedback(ctx, rec.ID, "old", func(ctx context.Context, tx engram.FeedbackTx) (*engram.FeedbackResult, error) {
			tx.AddLearning(map[string]engram.Helpfulness{category: {Bad: 40}, list: {Bad: 30}, engram.AllFeatures: {Good: 100, Bad: 70}},
				"old", engram.Reputation{Votes: 1})
			return &engram.FeedbackResult{}, nil
		}); err != nil {
			t.Fatal(err)
		}
		ev, all, err := db.FindFeatureEvidence(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev[category]; ok || ev[list].Bad != 30 || all.Good != 100 {
			t.Errorf("features %+v, all %+v: want the list's 30 bad answers and no category", ev, all)
		}
		if got := res.Memory.Features(); slices.Contains(got, category) {
			t.Errorf("memory features %v name the retired category", got)
		}
	})
}

// TestLearnedVoiceShared: notes written beside a conversation's turns,
// in no speaker's voice, teach the model that kind whatever their
// wording: after answers went wrong with two wordings and right with the
// turns, a note in a third wording nobody judged sinks on a second server
// on the same database and after a restart, its breakdown naming the
// voice, while an unjudged turn keeps its score.
func TestLearnedVoiceShared(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		a := storetest.OpenWith(t, o)
		b := storetest.OpenWith(t, o)
		ctxA := storetest.Tenant(t, a, "acme")
		fb := feedbackOn(t, a)
		for i := range 30 {
			for _, v := range []struct {
				content, thumb string
				tags           []string
			}{
				{fmt.Sprintf("Keywords: tea%d, milk, sugar, kettle", i), engram.ThumbDown, nil},
				{fmt.Sprintf("TODO pottery%d / painting / beach", i), engram.ThumbDown, nil},
				{fmt.Sprintf("Caroline: I moved to Lisbon in spring %d and I work as a nurse there.", 2000+i), engram.ThumbUp, []string{"Caroline"}},
			} {
				res, err := a.CreateMemory(ctxA, &engram.Memory{Content: v.content, Tags: v.tags, Category: "life", Type: "dialog_turn"})
				if err != nil {
					t.Fatal(err)
				}
				rec := saveRecall(t, ctxA, a, res.Memory)
				if _, err := fb.SubmitFeedback(ctxA, engram.FeedbackInput{RecallID: rec.ID, Thumb: v.thumb,
					Rater: fmt.Sprintf("user%d", i)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		voice := engram.FeaturePrefix + "voice=none"
		check := func(name string, ctx context.Context, db *store.DB) {
			t.Helper()
			note, err := db.CreateMemory(ctx, &engram.Memory{Content: "Remember to ask about the pottery class and the beach trip?",
				Category: "life", Type: "dialog_turn"})
			if err != nil {
				t.Fatal(err)
			}
			turn, err := db.CreateMemory(ctx, &engram.Memory{Content: "Melanie: We went camping by the lake with the kids last week.",
				Tags: []string{"Melanie"}, Category: "life", Type: "dialog_turn"})
			if err != nil {
				t.Fatal(err)
			}
			help, err := db.FindHelpfulness(ctx, []*engram.Memory{note.Memory, turn.Memory})
			if err != nil {
				t.Fatal(err)
			}
			nf, top := featureScorer().Features(help[note.Memory.ID])
			tf, _ := featureScorer().Features(help[turn.Memory.ID])
			named := slices.ContainsFunc(top, func(f engram.FeatureWeight) bool { return f.Feature == voice && f.Weight < 0 })
			if !(nf < 0.7) || tf != 1 || !named {
				t.Errorf("%s: unjudged note factor %.3f (want < 0.7), turn %.3f (want 1), top features %+v", name, nf, tf, top)
			}
		}
		check("second server", storetest.Tenant(t, b, "acme"), b)
		for _, db := range []*store.DB{a, b} {
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
		c := storetest.OpenWith(t, o)
		check("after a restart", storetest.Tenant(t, c, "acme"), c)
	})
}
