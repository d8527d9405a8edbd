package store_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// fbClock is the store's clock in these tests: the real time until a
// test pins it, safe for concurrent use.
type fbClock struct {
	mu    sync.Mutex
	fixed time.Time
}

func (c *fbClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fixed.IsZero() {
		return time.Now()
	}
	return c.fixed
}

func (c *fbClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fixed = t
}

// fbFixture is a store of one engine with the feedback service wired as
// cmd/engram's NewServices does, and a tenant to act for.
type fbFixture struct {
	db     *store.DB
	svc    *learning.Feedback
	scorer *learning.Scorer
	cfg    engram.FeedbackConfig
	clock  *fbClock
	ctx    context.Context
}

func newFBFixture(t *testing.T, engine string) *fbFixture {
	t.Helper()
	return newFBFixtureWith(t, engine, func(*store.Options) {})
}

// newFBFixtureWith is newFBFixture on a store whose options tune sets.
func newFBFixtureWith(t *testing.T, engine string, tune func(*store.Options)) *fbFixture {
	t.Helper()
	clock := &fbClock{}
	o := storetest.Options(t, engine)
	o.Now = clock.Now
	tune(&o)
	db := storetest.OpenWith(t, o)
	scoring := learning.NewScoreConfig(configs.Default().Scoring)
	if err := scoring.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := engram.DefaultFeedbackConfig()
	// The store keeps learned queries as part of a credit (its delta and
	// history), so its tests have memories learn them.
	cfg.LearnQueries = true
	scorer := learning.NewScorer(scoring, time.Now)
	f := &fbFixture{db: db, svc: learning.NewFeedback(db, scorer, cfg), scorer: scorer, cfg: cfg, clock: clock}
	f.ctx = f.tenant(t, "alpha")
	return f
}

// captured is the store with RunFeedback recording the workflow it is
// given instead of running it.
type captured struct {
	*store.DB
	got store.GroupFeedback
}

func (c *captured) RunFeedback(ctx context.Context, recallID, rater string, fn engram.FeedbackFunc) (*engram.FeedbackResult, error) {
	c.got = store.GroupFeedback{Ctx: ctx, RecallID: recallID, Rater: rater, Fn: fn}
	return &engram.FeedbackResult{}, nil
}

// workflow returns what the feedback service gives the store to run for
// in (its context, recall and workflow), each run's transaction wrapped
// by wrap (nil: as it is).
func (f *fbFixture) workflow(t *testing.T, ctx context.Context, in engram.FeedbackInput, wrap func(engram.FeedbackTx) engram.FeedbackTx) store.GroupFeedback {
	t.Helper()
	c := &captured{DB: f.db}
	if _, err := learning.NewFeedback(c, f.scorer, f.cfg).SubmitFeedback(ctx, in); err != nil {
		t.Fatalf("feedback %+v: %v", in, err)
	}
	if fn := c.got.Fn; wrap != nil {
		c.got.Fn = func(ctx context.Context, tx engram.FeedbackTx) (*engram.FeedbackResult, error) {
			return fn(ctx, wrap(tx))
		}
	}
	return c.got
}

// run runs g as the store runs a feedback's workflow.
func (f *fbFixture) run(g store.GroupFeedback) (*engram.FeedbackResult, error) {
	return f.db.RunFeedback(g.Ctx, g.RecallID, g.Rater, g.Fn)
}

// tenant returns a context acting for tenant name through API key "k_test".
func (f *fbFixture) tenant(t *testing.T, name string) context.Context {
	t.Helper()
	return engram.NewContextWithActor(storetest.Tenant(t, f.db, name), engram.Actor{KeyID: "k_test"})
}

func (f *fbFixture) memory(t *testing.T, ctx context.Context, content, category string) *engram.Memory {
	t.Helper()
	res, err := f.db.CreateMemory(ctx, &engram.Memory{Content: content, Category: category})
	if err != nil {
		t.Fatal(err)
	}
	return res.Memory
}

// recall stores a recall that injected ms, routed to category.
func (f *fbFixture) recall(t *testing.T, ctx context.Context, category string, ms ...*engram.Memory) *engram.Recall {
	t.Helper()
	r := &engram.Recall{Query: "q", Route: engram.Route{Domains: []engram.DomainScore{{Name: category, Score: 0.9}}},
		TokenBudget: 100, CreatedAt: time.Now()}
	for _, m := range ms {
		// Equal scores: every memory carries the answer's full weight.
		r.Items = append(r.Items, engram.RecallItem{ID: m.ID, Version: m.Version, Category: m.Category, Text: m.Content, Score: 0.5})
	}
	if err := f.db.SaveRecall(ctx, r, "", ""); err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fbFixture) interaction(t *testing.T, ctx context.Context, in engram.Interaction) *engram.Interaction {
	t.Helper()
	out, err := f.svc.CreateInteraction(ctx, &in)
	if err != nil {
		t.Fatalf("create interaction %+v: %v", in, err)
	}
	return out
}

// answer stores a text answer to prompt in session and turn.
func (f *fbFixture) answer(t *testing.T, session, turn, prompt, response string) *engram.Interaction {
	t.Helper()
	return f.interaction(t, f.ctx, engram.Interaction{SessionID: session, TurnID: turn, Prompt: prompt, Response: response})
}

func (f *fbFixture) feedback(t *testing.T, ctx context.Context, in engram.FeedbackInput) *engram.FeedbackResult {
	t.Helper()
	res, err := f.svc.SubmitFeedback(ctx, in)
	if err != nil {
		t.Fatalf("feedback %+v: %v", in, err)
	}
	if res.Credited == nil || res.Pairs == nil {
		t.Errorf("feedback %+v: credited %v, pairs %v: want non-nil lists", in, res.Credited, res.Pairs)
	}
	return res
}

func (f *fbFixture) thumb(t *testing.T, in *engram.Interaction, thumb string) *engram.FeedbackResult {
	t.Helper()
	return f.feedback(t, f.ctx, engram.FeedbackInput{InteractionID: in.ID, Thumb: thumb})
}

func (f *fbFixture) rate(t *testing.T, in *engram.Interaction, rating int) *engram.FeedbackResult {
	t.Helper()
	return f.feedback(t, f.ctx, engram.FeedbackInput{InteractionID: in.ID, Rating: rating})
}

func (f *fbFixture) pairs(t *testing.T, ctx context.Context, filter engram.PairFilter) ([]*engram.Pair, string) {
	t.Helper()
	var out []*engram.Pair
	next, err := f.db.EachPair(ctx, filter, func(p *engram.Pair) error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatalf("EachPair %+v: %v", filter, err)
	}
	return out, next
}

func (f *fbFixture) unpaired(t *testing.T, ctx context.Context, filter engram.PairFilter) ([]*engram.Unpaired, string) {
	t.Helper()
	var out []*engram.Unpaired
	next, err := f.db.EachUnpaired(ctx, filter, func(u *engram.Unpaired) error {
		out = append(out, u)
		return nil
	})
	if err != nil {
		t.Fatalf("EachUnpaired %+v: %v", filter, err)
	}
	return out, next
}

func (f *fbFixture) get(t *testing.T, ctx context.Context, id string) *engram.Memory {
	t.Helper()
	m, err := f.db.FindMemoryByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func refsOf(ms ...*engram.Memory) []engram.MemoryRef {
	refs := []engram.MemoryRef{}
	for _, m := range ms {
		refs = append(refs, engram.MemoryRef{ID: m.ID, Version: m.Version})
	}
	return refs
}

// onePair checks that res completed exactly one pair and returns it.
func onePair(t *testing.T, f *fbFixture, res *engram.FeedbackResult) *engram.Pair {
	t.Helper()
	if len(res.Pairs) != 1 {
		t.Fatalf("feedback completed pairs %v, want one", res.Pairs)
	}
	all, _ := f.pairs(t, f.ctx, engram.PairFilter{})
	for _, p := range all {
		if p.ID == res.Pairs[0] {
			return p
		}
	}
	t.Fatalf("pair %s is not exported", res.Pairs[0])
	return nil
}

func noPair(t *testing.T, what string, res *engram.FeedbackResult) {
	t.Helper()
	if len(res.Pairs) != 0 {
		t.Errorf("%s: completed pairs %v, want none", what, res.Pairs)
	}
}

func wantPair(t *testing.T, p *engram.Pair, kind, chosen, rejected string, margin float64) {
	t.Helper()
	if p.Kind != kind || p.Chosen != chosen || p.Rejected != rejected || math.Abs(p.Margin-margin) > 1e-12 {
		t.Errorf("pair kind %q chosen %q rejected %q margin %v; want %q %q %q %v",
			p.Kind, p.Chosen, p.Rejected, p.Margin, kind, chosen, rejected, margin)
	}
}

func pairIDs(ps []*engram.Pair) []string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}

// TestFeedbackRegenerationPairProvenance: two answers to one turn, each
// from its own recall, judged down then up make one regeneration pair
// whose chosen and rejected sides keep the memory versions their
// recalls injected, the feedback ids, the prompt's messages and the
// category of the completing answer's recall.
func TestFeedbackRegenerationPairProvenance(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		m1 := f.memory(t, f.ctx, "The user likes oat milk", "preference")
		m2 := f.memory(t, f.ctx, "The user drinks espresso at work", "work")
		r1 := f.recall(t, f.ctx, "preference", m1)
		r2 := f.recall(t, f.ctx, "work", m1, m2)
		msgs := []engram.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "推荐一杯咖啡"}}
		a := f.interaction(t, f.ctx, engram.Interaction{Messages: msgs, Response: "Espresso.", RecallID: r1.ID, SessionID: "s", TurnID: "t"})
		b := f.interaction(t, f.ctx, engram.Interaction{Messages: msgs, Response: "燕麦拿铁", RecallID: r2.ID, SessionID: "s", TurnID: "t"})
		if a.GroupKey != b.GroupKey || a.Prompt != "system: Be brief.\nuser: 推荐一杯咖啡" || !slices.Equal(a.Messages, msgs) {
			t.Fatalf("interactions %+v and %+v", a, b)
		}
		fa := f.thumb(t, a, engram.ThumbDown)
		noPair(t, "first judgement", fa)
		if len(fa.Credited) != 1 || fa.Credited[0].ID != m1.ID || fa.Credited[0].DownCount != 1 {
			t.Errorf("down on a credited %+v, want m1 only", fa.Credited)
		}
		fb := f.thumb(t, b, engram.ThumbUp)
		if got := []string{fb.Credited[0].ID, fb.Credited[1].ID}; len(fb.Credited) != 2 || !slices.Equal(got, sortedIDs(m1, m2)) {
			t.Errorf("up on b credited %+v, want m1 and m2 in id order", fb.Credited)
		}
		p := onePair(t, f, fb)
		wantPair(t, p, engram.PairRegeneration, "燕麦拿铁", "Espresso.", 2)
		if p.ChosenInteractionID != b.ID || p.RejectedInteractionID != a.ID || !slices.Equal(p.FeedbackIDs, []string{fb.FeedbackID, fa.FeedbackID}) {
			t.Errorf("pair provenance: chosen %s rejected %s feedback %v", p.ChosenInteractionID, p.RejectedInteractionID, p.FeedbackIDs)
		}
		if !slices.Equal(p.ChosenMemories, refsOf(m1, m2)) || !slices.Equal(p.RejectedMemories, refsOf(m1)) {
			t.Errorf("pair memories: chosen %v rejected %v", p.ChosenMemories, p.RejectedMemories)
		}
		if p.Prompt != a.Prompt || !slices.Equal(p.Messages, msgs) || p.Category != "work" || p.CreatedAt.IsZero() {
			t.Errorf("pair prompt %q messages %v category %q created %v", p.Prompt, p.Messages, p.Category, p.CreatedAt)
		}
		// The memories moved, the provenance still names the versions shown.
		if got := f.get(t, f.ctx, m1.ID); got.Version != m1.Version+2 || got.UpCount != 1 || got.DownCount != 1 {
			t.Errorf("m1 after down and up: version %d up %d down %d", got.Version, got.UpCount, got.DownCount)
		}
	})
}

func sortedIDs(ms ...*engram.Memory) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	slices.Sort(ids)
	return ids
}

// TestFeedbackGroupingWithoutTurn: without a turn id, answers group by
// session and the prompt with white space folded; another session, or a
// turn id on one side, is another group.
func TestFeedbackGroupingWithoutTurn(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)

		a := f.answer(t, "s1", "", "What coffee do I like?", "Espresso.")
		b := f.answer(t, "s1", "", "  What   coffee\tdo I\nlike?  ", "Oat latte.")
		if a.GroupKey != b.GroupKey {
			t.Errorf("prompts equal modulo white space: group keys %q and %q", a.GroupKey, b.GroupKey)
		}
		noPair(t, "first", f.thumb(t, a, engram.ThumbDown))
		wantPair(t, onePair(t, f, f.thumb(t, b, engram.ThumbUp)), engram.PairRegeneration, "Oat latte.", "Espresso.", 2)

		// Messages whose contents differ only in runs of spaces group too.
		m1 := []engram.Message{{Role: "user", Content: "Hi  there,   what tea?"}}
		m2 := []engram.Message{{Role: "user", Content: "Hi there, what tea?"}}
		c := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s1", Messages: m1, Response: "Green tea."})
		d := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s1", Messages: m2, Response: "Black tea."})
		if c.GroupKey != d.GroupKey {
			t.Errorf("messages equal modulo white space: group keys %q and %q", c.GroupKey, d.GroupKey)
		}
		noPair(t, "first", f.thumb(t, c, engram.ThumbUp))
		wantPair(t, onePair(t, f, f.thumb(t, d, engram.ThumbDown)), engram.PairRegeneration, "Green tea.", "Black tea.", 2)

		t.Run("messages with a line break or padding", func(t *testing.T) {
			// A line break inside a content, or white space around it, is
			// white space like any other.
			m3 := []engram.Message{{Role: "user", Content: "Which\ncake?"}}
			m4 := []engram.Message{{Role: "user", Content: "Which cake?"}}
			m5 := []engram.Message{{Role: "user", Content: " Which cake? "}}
			x := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s1", Messages: m3, Response: "Cheesecake."})
			y := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s1", Messages: m4, Response: "Carrot cake."})
			z := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s1", Messages: m5, Response: "Lemon cake."})
			if x.GroupKey != y.GroupKey || z.GroupKey != y.GroupKey {
				t.Errorf("messages equal modulo white space: group keys %q, %q and %q", x.GroupKey, y.GroupKey, z.GroupKey)
			}
		})
		for _, tc := range []struct {
			name       string
			sessA, tA  string
			sessB, tB  string
			promptB    string
			wantSameGK bool
		}{
			{"different sessions", "s2", "", "s3", "", "What coffee do I like?", false},
			{"turn id on one side", "s4", "t1", "s4", "", "What coffee do I like?", false},
			{"different prompts", "s5", "", "s5", "", "What tea do I like?", false},
			{"same turn, other session", "s6", "t1", "s7", "t1", "What coffee do I like?", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				x := f.answer(t, tc.sessA, tc.tA, "What coffee do I like?", "Mocha, "+tc.name)
				y := f.answer(t, tc.sessB, tc.tB, tc.promptB, "Cortado, "+tc.name)
				if x.GroupKey == y.GroupKey {
					t.Errorf("group keys equal: %q", x.GroupKey)
				}
				noPair(t, "first", f.thumb(t, x, engram.ThumbDown))
				noPair(t, "second", f.thumb(t, y, engram.ThumbUp))
			})
		}
		if all, _ := f.pairs(t, f.ctx, engram.PairFilter{}); len(all) != 2 {
			t.Errorf("%d pairs exported, want 2", len(all))
		}
	})
}

// TestFeedbackCorrectionPair: a correction makes a correction pair, the
// correction chosen over the answer, with margin 1 − min(signal, 0).
func TestFeedbackCorrectionPair(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		m := f.memory(t, f.ctx, "The user likes oat milk", "preference")
		rec := f.recall(t, f.ctx, "preference", m)
		for _, tc := range []struct {
			name   string
			in     engram.FeedbackInput
			margin float64
		}{
			{"thumb down", engram.FeedbackInput{Thumb: engram.ThumbDown}, 2},
			{"rating 2", engram.FeedbackInput{Rating: 2}, 1.5},
			{"rating 1", engram.FeedbackInput{Rating: 1}, 2},
			{"rating 3", engram.FeedbackInput{Rating: 3}, 1},
			{"thumb up", engram.FeedbackInput{Thumb: engram.ThumbUp}, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				in := f.interaction(t, f.ctx, engram.Interaction{SessionID: tc.name, Prompt: "How do I take my coffee?",
					Response: "Black, " + tc.name, RecallID: rec.ID})
				fb := tc.in
				fb.InteractionID, fb.Correction = in.ID, "With oat milk, "+tc.name
				res := f.feedback(t, f.ctx, fb)
				p := onePair(t, f, res)
				wantPair(t, p, engram.PairCorrection, "With oat milk, "+tc.name, "Black, "+tc.name, tc.margin)
				if p.ChosenInteractionID != "" || p.RejectedInteractionID != in.ID || !slices.Equal(p.FeedbackIDs, []string{res.FeedbackID}) ||
					!slices.Equal(p.ChosenMemories, refsOf(m)) || !slices.Equal(p.RejectedMemories, refsOf(m)) ||
					p.Prompt != "How do I take my coffee?" || p.Category != "preference" {
					t.Errorf("correction pair provenance %+v", p)
				}
			})
		}
		t.Run("correction equal to the answer", func(t *testing.T) {
			in := f.answer(t, "eq", "", "How do I take my coffee?", "With oat milk.")
			noPair(t, "correction equal to the answer", f.feedback(t, f.ctx,
				engram.FeedbackInput{InteractionID: in.ID, Thumb: engram.ThumbDown, Correction: "With oat milk."}))
		})
		t.Run("correction without interaction", func(t *testing.T) {
			_, err := f.svc.SubmitFeedback(f.ctx, engram.FeedbackInput{RecallID: rec.ID, Thumb: engram.ThumbDown, Correction: "x"})
			if engram.ErrorCode(err) != engram.EINVALID {
				t.Errorf("correction on a recall: %v, want EINVALID", err)
			}
		})
	})
}

// TestFeedbackRatingPairs: ratings two stars apart make a rating pair,
// one star or equal ratings none; a thumb against a rating makes a
// regeneration pair when the signals differ by at least 1; identical
// answers never pair; a lone thumb is unpaired data with its label, and
// three stars are neutral: no credit, no unpaired line.
func TestFeedbackRatingPairs(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		type judgement struct {
			thumb  string
			rating int
		}
		judge := func(t *testing.T, in *engram.Interaction, j judgement) *engram.FeedbackResult {
			t.Helper()
			return f.feedback(t, f.ctx, engram.FeedbackInput{InteractionID: in.ID, Thumb: j.thumb, Rating: j.rating})
		}
		var judged []*engram.Interaction // in creation order
		signal := map[string]float64{}
		for _, tc := range []struct {
			name         string
			a, b         judgement
			sameResponse bool
			kind         string // "" for no pair
			chosenB      bool
			margin       float64
		}{
			{name: "5 vs 3", a: judgement{rating: 5}, b: judgement{rating: 3}, kind: engram.PairRating, margin: 1},
			{name: "3 vs 5", a: judgement{rating: 3}, b: judgement{rating: 5}, kind: engram.PairRating, chosenB: true, margin: 1},
			{name: "1 vs 5", a: judgement{rating: 1}, b: judgement{rating: 5}, kind: engram.PairRating, chosenB: true, margin: 2},
			{name: "2 vs 4", a: judgement{rating: 2}, b: judgement{rating: 4}, kind: engram.PairRating, chosenB: true, margin: 1},
			{name: "4 vs 3", a: judgement{rating: 4}, b: judgement{rating: 3}},
			{name: "2 vs 3", a: judgement{rating: 2}, b: judgement{rating: 3}},
			{name: "3 vs 3", a: judgement{rating: 3}, b: judgement{rating: 3}},
			{name: "5 vs 5", a: judgement{rating: 5}, b: judgement{rating: 5}},
			{name: "up vs 2", a: judgement{thumb: "up"}, b: judgement{rating: 2}, kind: engram.PairRegeneration, margin: 1.5},
			{name: "2 vs up", a: judgement{rating: 2}, b: judgement{thumb: "up"}, kind: engram.PairRegeneration, chosenB: true, margin: 1.5},
			{name: "down vs 4", a: judgement{thumb: "down"}, b: judgement{rating: 4}, kind: engram.PairRegeneration, chosenB: true, margin: 1.5},
			{name: "up vs 3", a: judgement{thumb: "up"}, b: judgement{rating: 3}, kind: engram.PairRegeneration, margin: 1},
			{name: "up vs 4", a: judgement{thumb: "up"}, b: judgement{rating: 4}},
			{name: "up vs up", a: judgement{thumb: "up"}, b: judgement{thumb: "up"}},
			{name: "up vs down, identical answers", a: judgement{thumb: "up"}, b: judgement{thumb: "down"}, sameResponse: true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				respA, respB := "Answer A to "+tc.name, "Answer B to "+tc.name
				if tc.sameResponse {
					respB = respA
				}
				a := f.answer(t, "s", tc.name, "Rate me: "+tc.name, respA)
				b := f.answer(t, "s", tc.name, "Rate me: "+tc.name, respB)
				noPair(t, "first judgement", judge(t, a, tc.a))
				res := judge(t, b, tc.b)
				judged = append(judged, a, b)
				signal[a.ID] = engram.FeedbackInput{Thumb: tc.a.thumb, Rating: tc.a.rating}.Signal()
				signal[b.ID] = engram.FeedbackInput{Thumb: tc.b.thumb, Rating: tc.b.rating}.Signal()
				if tc.kind == "" {
					noPair(t, tc.name, res)
					return
				}
				chosen, rejected := respA, respB
				if tc.chosenB {
					chosen, rejected = respB, respA
				}
				wantPair(t, onePair(t, f, res), tc.kind, chosen, rejected, tc.margin)
			})
		}

		// A lone thumb: no pair, an unpaired line with its label.
		for _, thumb := range []string{engram.ThumbDown, engram.ThumbUp} {
			in := f.answer(t, "lone", thumb, "Lone prompt "+thumb, "Lone answer "+thumb)
			noPair(t, "lone thumb", f.thumb(t, in, thumb))
			judged = append(judged, in)
			signal[in.ID] = engram.FeedbackInput{Thumb: thumb}.Signal()
		}
		// Three stars on an answer whose recall injected a memory: neutral.
		m := f.memory(t, f.ctx, "The user likes oat milk", "preference")
		rec := f.recall(t, f.ctx, "preference", m)
		neutral := f.interaction(t, f.ctx, engram.Interaction{Prompt: "Neutral prompt", Response: "Neutral answer", RecallID: rec.ID})
		res := f.rate(t, neutral, 3)
		if res.Signal != 0 || len(res.Credited) != 0 || len(res.Pairs) != 0 {
			t.Errorf("3 stars: %+v, want signal 0, nothing credited, no pair", res)
		}
		if got := f.get(t, f.ctx, m.ID); got.Version != m.Version || got.UpCount != 0 || got.DownCount != 0 {
			t.Errorf("3 stars moved the memory: %+v", got)
		}

		var want []string
		for _, in := range judged {
			if s := signal[in.ID]; s != 0 {
				want = append(want, fmt.Sprintf("%s|%s|%v", in.Prompt, in.Response, s > 0))
			}
		}
		us, next := f.unpaired(t, f.ctx, engram.PairFilter{})
		var got []string
		for _, u := range us {
			got = append(got, fmt.Sprintf("%s|%s|%v", u.Prompt, u.Completion, u.Label))
			if u.Completion == "Neutral answer" {
				t.Errorf("a 3-star answer is unpaired data")
			}
		}
		if next != "" || !slices.Equal(got, want) {
			t.Errorf("unpaired (next %q):\n got %q\nwant %q", next, got, want)
		}
		// |signal| ≥ 1: only the thumbs and the 1- and 5-star ratings.
		strong, _ := f.unpaired(t, f.ctx, engram.PairFilter{MinMargin: 1})
		nStrong := 0
		for _, in := range judged {
			if math.Abs(signal[in.ID]) >= 1 {
				nStrong++
			}
		}
		if len(strong) != nStrong {
			t.Errorf("unpaired with |signal| ≥ 1: %d, want %d", len(strong), nStrong)
		}
	})
}

// TestFeedbackDuplicatePairs: judging the same two answers again, with
// new idempotency keys and even the other way round, makes no second
// pair; the export lists each pair once.
func TestFeedbackDuplicatePairs(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		a := f.answer(t, "s", "t", "Which tea?", "Green tea.")
		b := f.answer(t, "s", "t", "Which tea?", "Black tea.")
		fb := func(in *engram.Interaction, thumb, key string) *engram.FeedbackResult {
			t.Helper()
			return f.feedback(t, f.ctx, engram.FeedbackInput{InteractionID: in.ID, Thumb: thumb, IdempotencyKey: key})
		}
		noPair(t, "a down", fb(a, engram.ThumbDown, "k1"))
		first := onePair(t, f, fb(b, engram.ThumbUp, "k2"))
		noPair(t, "a down again", fb(a, engram.ThumbDown, "k3"))
		noPair(t, "b up again", fb(b, engram.ThumbUp, "k4"))
		noPair(t, "b up, no key", fb(b, engram.ThumbUp, ""))
		noPair(t, "a up (changed mind)", fb(a, engram.ThumbUp, "k5"))
		noPair(t, "b down (changed mind)", fb(b, engram.ThumbDown, "k6"))
		all, _ := f.pairs(t, f.ctx, engram.PairFilter{})
		if len(all) != 1 || all[0].ID != first.ID {
			t.Errorf("pairs %v, want only %s", pairIDs(all), first.ID)
		}
		// A third regeneration pairs with each of the other two once.
		c := f.answer(t, "s", "t", "Which tea?", "Oolong.")
		res := fb(c, engram.ThumbUp, "k7") // a is up, b is down now
		if len(res.Pairs) != 1 {
			t.Errorf("third answer up: pairs %v, want one (against b)", res.Pairs)
		}
		noPair(t, "third answer up again", fb(c, engram.ThumbUp, "k8"))
		if all, _ = f.pairs(t, f.ctx, engram.PairFilter{}); len(all) != 2 {
			t.Errorf("%d pairs, want 2", len(all))
		}
	})
}

// TestFeedbackDuplicateCorrection: the same correction of the same
// answer sent twice (new idempotency keys) is one correction pair: the
// export must not list an identical training pair twice.
func TestFeedbackDuplicateCorrection(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		in := f.answer(t, "s", "t", "How do I take my coffee?", "Black.")
		for i, key := range []string{"c1", "c2", ""} {
			res := f.feedback(t, f.ctx, engram.FeedbackInput{InteractionID: in.ID, Thumb: engram.ThumbDown,
				Correction: "With oat milk.", IdempotencyKey: key})
			if i > 0 && len(res.Pairs) != 0 {
				t.Errorf("resubmission %d of the same correction made pairs %v", i, res.Pairs)
			}
		}
		if all, _ := f.pairs(t, f.ctx, engram.PairFilter{}); len(all) != 1 {
			t.Errorf("the same correction exported %d times, want once", len(all))
		}
		// Another correction of the same answer is another pair.
		res := f.feedback(t, f.ctx, engram.FeedbackInput{InteractionID: in.ID, Thumb: engram.ThumbDown, Correction: "With soy milk."})
		if len(res.Pairs) != 1 {
			t.Errorf("a different correction: pairs %v, want one", res.Pairs)
		}
	})
}

// TestFeedbackRaterCap: one rater moves one memory at most RaterCap
// times per window, however many votes it sends; later votes are
// recorded as capped and change nothing (no version, no event); another
// rater still moves it, and so does the same rater once the window has
// passed.
func TestFeedbackRaterCap(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		t0 := time.Now().UTC().Truncate(time.Second)
		f.clock.set(t0)
		target := f.memory(t, f.ctx, "The user likes cold brew", "preference")
		control := f.memory(t, f.ctx, "The user likes iced tea", "preference")
		if target.Confidence != control.Confidence || target.Stability != control.Stability || target.Reward != control.Reward {
			t.Fatalf("target %+v and control %+v start apart", target, control)
		}
		capN := f.cfg.RaterCap
		if capN != 3 || f.cfg.RevisionThreshold != 5 {
			t.Fatalf("default rater cap %d, revision threshold %d; the test assumes 3 and 5", capN, f.cfg.RevisionThreshold)
		}
		const votes = 1000
		start := time.Now()
		for i := range votes {
			key := ""
			if i%2 == 0 {
				key = fmt.Sprintf("troll-%d", i)
			}
			res := f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: target.ID, Thumb: engram.ThumbDown, Rater: "troll", IdempotencyKey: key})
			if len(res.Credited) != 1 {
				t.Fatalf("vote %d credited %+v", i, res.Credited)
			}
			c := res.Credited[0]
			applied := min(i+1, capN)
			// One rater's capped votes never reach the threshold.
			if c.Capped != (i >= capN) || c.DownCount != int64(applied) || c.Version != target.Version+int64(applied) ||
				c.NeedsRevision {
				t.Fatalf("vote %d: %+v; want capped %v, down %d, not flagged", i, c, i >= capN, applied)
			}
		}
		t.Logf("%d votes in %v", votes, time.Since(start))
		for range capN {
			f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: control.ID, Thumb: engram.ThumbDown, Rater: "judge"})
		}
		got, ctl := f.get(t, f.ctx, target.ID), f.get(t, f.ctx, control.ID)
		if got.DownCount != 3 || got.UpCount != 0 || got.NeedsRevision || got.Version != target.Version+3 {
			t.Errorf("after %d votes of one rater: down %d up %d needs_revision %v version %d", votes, got.DownCount, got.UpCount, got.NeedsRevision, got.Version)
		}
		if got.Reward != ctl.Reward || got.Confidence != ctl.Confidence || got.Stability != ctl.Stability {
			t.Errorf("capped memory: reward %v confidence %v stability %v; three applications give %v %v %v",
				got.Reward, got.Confidence, got.Stability, ctl.Reward, ctl.Confidence, ctl.Stability)
		}
		// Three full-strength down votes, by DESIGN §4's rules.
		wantConf, wantReward := target.Confidence, target.Reward
		for range 3 {
			wantConf -= f.cfg.ConfidenceStep * wantConf
			wantReward += f.cfg.RewardRate * (-1 - wantReward)
		}
		if math.Abs(got.Confidence-wantConf) > 1e-12 || math.Abs(got.Reward-wantReward) > 1e-12 || got.Stability > target.Stability {
			t.Errorf("confidence %v reward %v stability %v; want %v %v and stability not above %v",
				got.Confidence, got.Reward, got.Stability, wantConf, wantReward, target.Stability)
		}
		events, err := f.db.FindMemoryEvents(f.ctx, target.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 4 {
			t.Errorf("%d events, want create and three feedback", len(events))
		}
		for _, ev := range events[1:] {
			if ev.Action != engram.ActionFeedback || ev.Actor.KeyID != "k_test" {
				t.Errorf("event %+v, want a feedback event by k_test", ev)
			}
		}

		// Another rater moves it.
		res := f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: target.ID, Thumb: engram.ThumbDown, Rater: "fair"})
		if c := res.Credited[0]; c.Capped || c.DownCount != 4 {
			t.Errorf("another rater: %+v, want applied, down 4", c)
		}
		// Within the window the troll stays capped; after it, it counts again.
		f.clock.set(t0.Add(f.cfg.RaterWindow - time.Minute))
		if c := f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: target.ID, Thumb: engram.ThumbDown, Rater: "troll"}).Credited[0]; !c.Capped || c.DownCount != 4 {
			t.Errorf("troll inside the window: %+v, want capped", c)
		}
		f.clock.set(t0.Add(f.cfg.RaterWindow + time.Second))
		if c := f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: target.ID, Thumb: engram.ThumbDown, Rater: "troll"}).Credited[0]; c.Capped || c.DownCount != 5 {
			t.Errorf("troll after the window: %+v, want applied, down 5", c)
		}
		// The cap is per memory: the troll still moves the control.
		if c := f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: control.ID, Thumb: engram.ThumbDown, Rater: "troll"}).Credited[0]; c.Capped {
			t.Errorf("troll on another memory capped: %+v", c)
		}
		// needs_revision follows down − up ≥ 5 and is never cleared by votes.
		fresh := f.memory(t, f.ctx, "The user likes chai", "preference")
		steps := []struct {
			thumb string
			want  bool
		}{{"down", false}, {"down", false}, {"up", false}, {"down", false}, {"down", false}, {"down", false}, {"down", true}, {"up", true}}
		for i, s := range steps {
			c := f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: fresh.ID, Thumb: s.thumb, Rater: fmt.Sprintf("r%d", i)}).Credited[0]
			if c.NeedsRevision != s.want {
				t.Errorf("step %d (%s): up %d down %d needs_revision %v, want %v", i, s.thumb, c.UpCount, c.DownCount, c.NeedsRevision, s.want)
			}
		}
	})
}

// TestFeedbackRaterCapConcurrent: votes of one rater sent at once are
// capped like votes sent one after another.
func TestFeedbackRaterCapConcurrent(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		m := f.memory(t, f.ctx, "The user likes matcha", "preference")
		const n = 16
		var wg sync.WaitGroup
		capped := make([]bool, n)
		for i := range n {
			wg.Go(func() {
				res, err := f.svc.SubmitFeedback(f.ctx, engram.FeedbackInput{MemoryID: m.ID, Thumb: engram.ThumbDown, Rater: "swarm"})
				if err != nil {
					t.Errorf("vote %d: %v", i, err)
					return
				}
				capped[i] = res.Credited[0].Capped
			})
		}
		wg.Wait()
		applied := 0
		for _, c := range capped {
			if !c {
				applied++
			}
		}
		got := f.get(t, f.ctx, m.ID)
		if got.DownCount != int64(f.cfg.RaterCap) || applied != f.cfg.RaterCap {
			t.Errorf("%d concurrent votes of one rater: down_count %d, %d reported applied; want %d", n, got.DownCount, applied, f.cfg.RaterCap)
		}
	})
}

// TestFeedbackConcurrentRegenerations: two answers of one turn judged at
// the same moment, one up and one down, still make their pair.
func TestFeedbackConcurrentRegenerations(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		// Two groups at a time: four transactions, the store's pool size,
		// so the two answers of a group are judged at the same moment.
		const groups = 48
		for g := 0; g < groups; g += 2 {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := g; i < g+2; i++ {
				turn := fmt.Sprint("t", i)
				good := f.answer(t, "s", turn, "Prompt "+turn, "Good "+turn)
				bad := f.answer(t, "s", turn, "Prompt "+turn, "Bad "+turn)
				for _, j := range []struct {
					in    *engram.Interaction
					thumb string
				}{{good, engram.ThumbUp}, {bad, engram.ThumbDown}} {
					wg.Go(func() {
						<-start
						if _, err := f.svc.SubmitFeedback(f.ctx, engram.FeedbackInput{InteractionID: j.in.ID, Thumb: j.thumb}); err != nil {
							t.Error(err)
						}
					})
				}
			}
			close(start)
			wg.Wait()
		}
		all, _ := f.pairs(t, f.ctx, engram.PairFilter{})
		if len(all) != groups {
			t.Errorf("%d groups judged concurrently up and down: %d pairs, want %d", groups, len(all), groups)
		}
		for _, p := range all {
			if !strings.HasPrefix(p.Chosen, "Good ") || !strings.HasPrefix(p.Rejected, "Bad ") {
				t.Errorf("pair %q over %q", p.Chosen, p.Rejected)
			}
		}
	})
}

// TestFeedbackIdempotencyStore: a repeated key returns the first result
// marked replayed and applies nothing; keys are per tenant; concurrent
// submissions with one key apply once.
func TestFeedbackIdempotencyStore(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		m := f.memory(t, f.ctx, "The user likes flat whites", "preference")
		in := engram.FeedbackInput{MemoryID: m.ID, Thumb: engram.ThumbUp, IdempotencyKey: "once"}
		first := f.feedback(t, f.ctx, in)
		second := f.feedback(t, f.ctx, in)
		if first.Replayed || !second.Replayed {
			t.Errorf("replayed: first %v, second %v", first.Replayed, second.Replayed)
		}
		second.Replayed = false
		if fmt.Sprintf("%+v", first) != fmt.Sprintf("%+v", second) {
			t.Errorf("replay %+v differs from the first result %+v", second, first)
		}
		if got := f.get(t, f.ctx, m.ID); got.UpCount != 1 || got.Version != m.Version+1 {
			t.Errorf("after a replay: up %d version %d", got.UpCount, got.Version)
		}
		// Another tenant's same key is its own submission.
		beta := f.tenant(t, "beta")
		bm := f.memory(t, beta, "Beta likes tea", "preference")
		res := f.feedback(t, beta, engram.FeedbackInput{MemoryID: bm.ID, Thumb: engram.ThumbUp, IdempotencyKey: "once"})
		if res.Replayed || res.FeedbackID == first.FeedbackID || len(res.Credited) != 1 || res.Credited[0].ID != bm.ID {
			t.Errorf("beta's key \"once\": %+v", res)
		}

		c := f.memory(t, f.ctx, "The user likes cortados", "preference")
		const n = 8
		results := make([]*engram.FeedbackResult, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r, err := f.svc.SubmitFeedback(f.ctx, engram.FeedbackInput{MemoryID: c.ID, Thumb: engram.ThumbUp, IdempotencyKey: "burst"})
				if err != nil {
					t.Errorf("submission %d: %v", i, err)
					return
				}
				results[i] = r
			})
		}
		wg.Wait()
		applied := 0
		for _, r := range results {
			if r == nil {
				continue
			}
			if !r.Replayed {
				applied++
			}
			if r.FeedbackID != results[0].FeedbackID {
				t.Errorf("feedback ids %s and %s for one key", r.FeedbackID, results[0].FeedbackID)
			}
		}
		if got := f.get(t, f.ctx, c.ID); applied != 1 || got.UpCount != 1 || got.Version != c.Version+1 {
			t.Errorf("%d concurrent submissions of one key: %d applied, up_count %d, version %d", n, applied, got.UpCount, got.Version)
		}
	})
}

// TestFeedbackExportFilters: time range (since inclusive, until
// exclusive), category and margin select pairs and unpaired lines; the
// time range is compared as instants whatever the zone.
func TestFeedbackExportFilters(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		t0 := time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour)
		m := f.memory(t, f.ctx, "The user likes oat milk", "preference")
		recs := map[string]*engram.Recall{"preference": f.recall(t, f.ctx, "preference", m), "work": f.recall(t, f.ctx, "work", m)}
		type made struct {
			at       time.Time
			category string
			margin   float64
			chosen   string
		}
		var want []made
		for i := range 12 {
			at := t0.Add(time.Duration(i/4) * time.Hour) // 4 pairs per hour
			f.clock.set(at)
			cat := "preference"
			if i%3 == 0 {
				cat = "work"
			}
			turn := fmt.Sprint("t", i)
			a := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s", TurnID: turn, Prompt: "P " + turn, Response: "bad " + turn, RecallID: recs[cat].ID})
			b := f.interaction(t, f.ctx, engram.Interaction{SessionID: "s", TurnID: turn, Prompt: "P " + turn, Response: "good " + turn, RecallID: recs[cat].ID})
			margin := 2.0
			switch i % 4 {
			case 1:
				f.rate(t, a, 3)
				margin = 1
			case 2:
				f.rate(t, a, 2)
				margin = 1.5
			default:
				f.thumb(t, a, engram.ThumbDown)
			}
			f.thumb(t, b, engram.ThumbUp)
			want = append(want, made{at, cat, margin, "good " + turn})
		}
		ptrT := func(t time.Time) *time.Time { return &t }
		ptrS := func(s string) *string { return &s }
		shanghai := time.FixedZone("CST", 8*3600)
		for _, tc := range []struct {
			name string
			f    engram.PairFilter
			keep func(made) bool
		}{
			{"all", engram.PairFilter{}, func(made) bool { return true }},
			{"since", engram.PairFilter{Since: ptrT(t0.Add(time.Hour))}, func(m made) bool { return !m.at.Before(t0.Add(time.Hour)) }},
			{"since in another zone", engram.PairFilter{Since: ptrT(t0.Add(time.Hour).In(shanghai))}, func(m made) bool { return !m.at.Before(t0.Add(time.Hour)) }},
			{"until", engram.PairFilter{Until: ptrT(t0.Add(time.Hour))}, func(m made) bool { return m.at.Before(t0.Add(time.Hour)) }},
			{"since and until", engram.PairFilter{Since: ptrT(t0.Add(time.Hour)), Until: ptrT(t0.Add(2 * time.Hour).In(shanghai))},
				func(m made) bool { return m.at.Equal(t0.Add(time.Hour)) }},
			{"category work", engram.PairFilter{Category: ptrS("work")}, func(m made) bool { return m.category == "work" }},
			{"category preference", engram.PairFilter{Category: ptrS("preference")}, func(m made) bool { return m.category == "preference" }},
			{"category none", engram.PairFilter{Category: ptrS("")}, func(made) bool { return false }},
			{"min margin 1.5", engram.PairFilter{MinMargin: 1.5}, func(m made) bool { return m.margin >= 1.5 }},
			{"min margin 2", engram.PairFilter{MinMargin: 2}, func(m made) bool { return m.margin >= 2 }},
			{"all filters", engram.PairFilter{Since: ptrT(t0.Add(time.Hour)), Category: ptrS("preference"), MinMargin: 1.5},
				func(m made) bool {
					return !m.at.Before(t0.Add(time.Hour)) && m.category == "preference" && m.margin >= 1.5
				}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var wantChosen []string
				for _, m := range want {
					if tc.keep(m) {
						wantChosen = append(wantChosen, m.chosen)
					}
				}
				ps, next := f.pairs(t, f.ctx, tc.f)
				var got []string
				for _, p := range ps {
					got = append(got, p.Chosen)
				}
				if next != "" || !slices.Equal(got, wantChosen) {
					t.Errorf("pairs (next %q):\n got %q\nwant %q", next, got, wantChosen)
				}
				// Paging one at a time gives the same pairs.
				var paged []string
				pf := tc.f
				pf.Limit = 1
				for range len(want) + 2 {
					ps, next := f.pairs(t, f.ctx, pf)
					for _, p := range ps {
						paged = append(paged, p.Chosen)
					}
					if next == "" {
						break
					}
					pf.Cursor = next
				}
				if !slices.Equal(paged, wantChosen) {
					t.Errorf("paged one at a time:\n got %q\nwant %q", paged, wantChosen)
				}
			})
		}
		// Unpaired lines follow the same time and category filters; their
		// min margin is on |signal|.
		us, _ := f.unpaired(t, f.ctx, engram.PairFilter{Category: ptrS("work"), MinMargin: 1})
		for _, u := range us {
			if !u.Label && !strings.HasPrefix(u.Completion, "bad ") || u.Label && !strings.HasPrefix(u.Completion, "good ") {
				t.Errorf("unpaired %+v", u)
			}
		}
		nWork := 0
		for i := range 12 {
			if i%3 == 0 {
				nWork++ // the good answer (up)
				if i%4 == 0 || i%4 == 3 {
					nWork++ // the bad one, thumbed down (not the 3- or 2-star ones)
				}
			}
		}
		if len(us) != nWork {
			t.Errorf("unpaired work lines with |signal| ≥ 1: %d, want %d", len(us), nWork)
		}
		us, _ = f.unpaired(t, f.ctx, engram.PairFilter{Until: ptrT(t0.Add(time.Hour))})
		if len(us) != 7 { // four good answers; the bad ones thumbed down or rated 2, not the 3-star one
			t.Errorf("unpaired before t0+1h: %d, want 7", len(us))
		}
	})
}

// TestFeedbackCursors: export cursors are signed for one tenant, one
// kind of export and one filter; anything else is EINVALID.
func TestFeedbackCursors(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		beta := f.tenant(t, "beta")
		for _, ctx := range []context.Context{f.ctx, beta} {
			for i := range 3 {
				turn := fmt.Sprint("t", i)
				a := f.interaction(t, ctx, engram.Interaction{SessionID: "s", TurnID: turn, Prompt: "P", Response: "bad " + turn})
				b := f.interaction(t, ctx, engram.Interaction{SessionID: "s", TurnID: turn, Prompt: "P", Response: "good " + turn})
				f.feedback(t, ctx, engram.FeedbackInput{InteractionID: a.ID, Thumb: engram.ThumbDown})
				f.feedback(t, ctx, engram.FeedbackInput{InteractionID: b.ID, Thumb: engram.ThumbUp})
			}
		}
		_, cur := f.pairs(t, f.ctx, engram.PairFilter{Limit: 1})
		_, ucur := f.unpaired(t, f.ctx, engram.PairFilter{Limit: 1})
		_, betaCur := f.pairs(t, beta, engram.PairFilter{Limit: 1})
		if cur == "" || ucur == "" || betaCur == "" {
			t.Fatalf("cursors %q %q %q", cur, ucur, betaCur)
		}
		// The cursor resumes with another limit: limit is not a filter.
		if ps, next := f.pairs(t, f.ctx, engram.PairFilter{Cursor: cur}); len(ps) != 2 || next != "" {
			t.Errorf("resumed: %d pairs, next %q", len(ps), next)
		}
		payload, sig, _ := strings.Cut(cur, ".")
		forged := base64.RawURLEncoding.EncodeToString([]byte(`{"a":2}`)) + "." + sig
		if forged == cur {
			forged = base64.RawURLEncoding.EncodeToString([]byte(`{"a":3}`)) + "." + sig
		}
		cat := "work"
		since := time.Now().Add(-time.Hour)
		for _, tc := range []struct {
			name   string
			ctx    context.Context
			filter engram.PairFilter
			pairs  bool
		}{
			{"garbage", f.ctx, engram.PairFilter{Cursor: "not-a-cursor"}, true},
			{"no signature", f.ctx, engram.PairFilter{Cursor: payload}, true},
			{"forged position", f.ctx, engram.PairFilter{Cursor: forged}, true},
			{"another tenant's", f.ctx, engram.PairFilter{Cursor: betaCur}, true},
			{"to another tenant", beta, engram.PairFilter{Cursor: cur}, true},
			{"with min margin", f.ctx, engram.PairFilter{Cursor: cur, MinMargin: 1}, true},
			{"with category", f.ctx, engram.PairFilter{Cursor: cur, Category: &cat}, true},
			{"with since", f.ctx, engram.PairFilter{Cursor: cur, Since: &since}, true},
			{"with until", f.ctx, engram.PairFilter{Cursor: cur, Until: &since}, true},
			{"unpaired cursor for pairs", f.ctx, engram.PairFilter{Cursor: ucur}, true},
			{"pairs cursor for unpaired", f.ctx, engram.PairFilter{Cursor: cur}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				called := false
				var err error
				if tc.pairs {
					_, err = f.db.EachPair(tc.ctx, tc.filter, func(*engram.Pair) error { called = true; return nil })
				} else {
					_, err = f.db.EachUnpaired(tc.ctx, tc.filter, func(*engram.Unpaired) error { called = true; return nil })
				}
				if engram.ErrorCode(err) != engram.EINVALID || called {
					t.Errorf("err %v, called %v; want EINVALID before any line", err, called)
				}
			})
		}
	})
}

// TestFeedbackExportPages: more pairs and unpaired lines than one store
// page (500) come out in order, once each, whole or by cursor.
func TestFeedbackExportPages(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		if engine != "sqlite" {
			// The paging code is the same SQL on both engines; making 510
			// pairs takes about 6 s on PostgreSQL under -race.
			t.Skip("SQLite only: slow on PostgreSQL")
		}
		f := newFBFixture(t, engine)
		const n = 510
		start := time.Now()
		var want []string
		for i := range n {
			turn := fmt.Sprint("t", i)
			a := f.answer(t, "s", turn, "P", "bad "+turn)
			b := f.answer(t, "s", turn, "P", "good "+turn)
			f.thumb(t, a, engram.ThumbDown)
			f.thumb(t, b, engram.ThumbUp)
			want = append(want, "good "+turn)
		}
		t.Logf("%d pairs made in %v", n, time.Since(start))
		chosen := func(ps []*engram.Pair) []string {
			out := make([]string, len(ps))
			for i, p := range ps {
				out[i] = p.Chosen
			}
			return out
		}
		all, next := f.pairs(t, f.ctx, engram.PairFilter{})
		if next != "" || !slices.Equal(chosen(all), want) {
			t.Errorf("all pairs: %d, next %q; want %d in order", len(all), next, n)
		}
		for _, limit := range []int{500, 499, 501, 200, n, n + 1} {
			var got []string
			filter := engram.PairFilter{Limit: limit}
			for page := 0; ; page++ {
				ps, next := f.pairs(t, f.ctx, filter)
				if len(ps) > limit || (next != "" && len(ps) != limit) {
					t.Errorf("limit %d page %d: %d pairs, next %q", limit, page, len(ps), next)
				}
				got = append(got, chosen(ps)...)
				if next == "" || page > n {
					break
				}
				filter.Cursor = next
			}
			if !slices.Equal(got, want) {
				t.Errorf("limit %d: %d pairs, want %d in order", limit, len(got), n)
			}
		}
		var wantU []string
		for _, w := range want {
			wantU = append(wantU, "bad"+strings.TrimPrefix(w, "good"), w)
		}
		for _, limit := range []int{0, 500, 1000} {
			var got []string
			filter := engram.PairFilter{Limit: limit}
			for page := 0; ; page++ {
				us, next := f.unpaired(t, f.ctx, filter)
				for _, u := range us {
					got = append(got, u.Completion)
					if u.Label != strings.HasPrefix(u.Completion, "good") {
						t.Errorf("unpaired %q label %v", u.Completion, u.Label)
					}
				}
				if next == "" || page > 2*n {
					break
				}
				filter.Cursor = next
			}
			if !slices.Equal(got, wantU) {
				t.Errorf("unpaired limit %d: %d lines, want %d in order", limit, len(got), len(wantU))
			}
		}
	})
}

// TestFeedbackExportSubsecond: since and until compare instants to the
// nanosecond stored, fractions of a second included (SQLite keeps times
// as text).
func TestFeedbackExportSubsecond(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		t0 := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
		offsets := []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, time.Second, 1500 * time.Millisecond, 10 * time.Second}
		for i, off := range offsets {
			f.clock.set(t0.Add(off))
			turn := fmt.Sprint("t", i)
			a := f.answer(t, "s", turn, "P", "bad "+turn)
			b := f.answer(t, "s", turn, "P", "good "+turn)
			f.thumb(t, a, engram.ThumbDown)
			f.thumb(t, b, engram.ThumbUp)
		}
		at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
		for _, tc := range []struct {
			name string
			f    engram.PairFilter
			want []int
		}{
			{"since 250ms", engram.PairFilter{Since: at(250 * time.Millisecond)}, []int{1, 2, 3, 4}},
			{"since 200ms", engram.PairFilter{Since: at(200 * time.Millisecond)}, []int{1, 2, 3, 4}},
			{"since 1s", engram.PairFilter{Since: at(time.Second)}, []int{2, 3, 4}},
			{"since 1.25s", engram.PairFilter{Since: at(1250 * time.Millisecond)}, []int{3, 4}},
			{"until 1s", engram.PairFilter{Until: at(time.Second)}, []int{0, 1}},
			{"until 1.5s", engram.PairFilter{Until: at(1500 * time.Millisecond)}, []int{0, 1, 2}},
			{"until 1.5s + 1µs", engram.PairFilter{Until: at(1500*time.Millisecond + time.Microsecond)}, []int{0, 1, 2, 3}},
			{"since 100ms until 2s", engram.PairFilter{Since: at(100 * time.Millisecond), Until: at(2 * time.Second)}, []int{0, 1, 2, 3}},
			{"since 9.5s", engram.PairFilter{Since: at(9500 * time.Millisecond)}, []int{4}},
		} {
			var want []string
			for _, i := range tc.want {
				want = append(want, fmt.Sprint("good t", i))
			}
			ps, _ := f.pairs(t, f.ctx, tc.f)
			var got []string
			for _, p := range ps {
				got = append(got, p.Chosen)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: got %q, want %q", tc.name, got, want)
			}
		}
	})
}

// TestMainOrigin: a memory's helpfulness evidence carries the tenant's
// main origin — the origin whose memories hold the most evidence, good
// and bad — and never another tenant's.
func TestMainOrigin(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		f := newFBFixture(t, engine)
		note := func(ctx context.Context, content string) *engram.Memory {
			res, err := f.db.CreateMemory(ctx, &engram.Memory{Content: content, Category: "life", Type: "note"})
			if err != nil {
				t.Fatal(err)
			}
			return res.Memory
		}
		turn := f.memory(t, f.ctx, "Caroline moved to Lisbon in May", "life")
		n1, n2 := note(f.ctx, "Notes: Lisbon, May"), note(f.ctx, "Notes: chess, sourdough")
		if h, err := f.db.MemoryHelpfulness(f.ctx, turn.ID); err != nil || h.Main != (engram.Helpfulness{}) {
			t.Fatalf("before any feedback: main %+v (%v), want none", h.Main, err)
		}
		// Another tenant's origin with more evidence than any of alpha's.
		beta := f.tenant(t, "beta")
		for i := range 4 {
			b := note(beta, fmt.Sprint("Beta note ", i))
			f.feedback(t, beta, engram.FeedbackInput{MemoryID: b.ID, Thumb: engram.ThumbDown, Rater: fmt.Sprint("b", i)})
		}
		f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: turn.ID, Thumb: engram.ThumbUp, Rater: "r1"})
		f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: n1.ID, Thumb: engram.ThumbDown, Rater: "r2"})
		f.feedback(t, f.ctx, engram.FeedbackInput{MemoryID: n2.ID, Thumb: engram.ThumbDown, Rater: "r3"})
		ht, err := f.db.MemoryHelpfulness(f.ctx, turn.ID)
		if err != nil {
			t.Fatal(err)
		}
		hn, err := f.db.MemoryHelpfulness(f.ctx, n1.ID)
		if err != nil {
			t.Fatal(err)
		}
		if hn.Origin.Bad != 2 || ht.Origin.Good != 1 {
			t.Fatalf("origin evidence: notes %+v, turn %+v", hn.Origin, ht.Origin)
		}
		if ht.Main != hn.Origin || hn.Main != hn.Origin {
			t.Errorf("main origin: %+v for the turn, %+v for the note; want the notes' %+v", ht.Main, hn.Main, hn.Origin)
		}
	})
}
