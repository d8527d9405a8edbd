package learning_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index/indextest"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store/storetest"
)

// TestKnowledgeUpdate: of two memories written the same way about the
// same subject, the newer outranks the older without any feedback, and
// the older's breakdown says which memory superseded it. Memories of
// another origin, of another category, with a key, P0 memories, and two
// memories of one instant are left alone; superseded_factor 1 turns the
// update off.
func TestKnowledgeUpdate(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "update")
	all := []string{engram.CategoryPreference, engram.CategoryLife, engram.CategoryWork}
	r := newRecaller(t, db, fixedRouter{all}, engram.DefaultRecallConfig())
	at := func(days int) *time.Time {
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, days)
		return &ts
	}
	chat := json.RawMessage(`{"kind":"chat","name":"support"}`)
	extractor := json.RawMessage(`{"kind":"extractor","name":"notes"}`)
	mem := func(content string, source json.RawMessage, occurred *time.Time) *engram.Memory {
		return &engram.Memory{Category: engram.CategoryPreference, Content: content, Source: source, OccurredAt: occurred}
	}
	stored := addMemories(t, db, ctx, append([]*engram.Memory{
		// 0, 1: one origin, one subject; the later occurred_at wins although
		// it was written first.
		mem("Dana's favourite tea is jasmine green tea from Fujian", chat, at(30)),
		mem("Dana's favourite tea is oolong green tea from Fujian", chat, at(1)),
		// 2: the same subject from another writer: a conflict, not an update.
		mem("Dana's favourite tea is earl grey green tea from Fujian", extractor, at(60)),
		// 3, 4: one origin and subject, the same instant: neither is newer.
		mem("Robin's commute is forty minutes by train to Leeds", chat, at(5)),
		mem("Robin's commute is fifty minutes by train to Leeds", chat, at(5)),
	}, fillers(engram.CategoryWork, 10)...)...)
	newer, older, other := stored[0], stored[1], stored[2]

	rec := recall(t, r, ctx, engram.RecallRequest{Query: "what tea does Dana like", TokenBudget: 2000, Fill: true})
	n, i := findItem(rec.Items, newer.ID)
	o, j := findItem(rec.Items, older.ID)
	x, k := findItem(rec.Items, other.ID)
	if i < 0 || j < 0 || k < 0 {
		t.Fatalf("newer at %d, older at %d, other origin at %d: %+v", i, j, k, rec.Items)
	}
	want := learning.DefaultScoreConfig().SupersededFactor
	if o.Breakdown.Superseded != want || o.Breakdown.SupersededBy != newer.ID {
		t.Errorf("older: superseded %v by %q, want %v by %s", o.Breakdown.Superseded, o.Breakdown.SupersededBy, want, newer.ID)
	}
	if n.Breakdown.Superseded != 1 || n.Breakdown.SupersededBy != "" || x.Breakdown.Superseded != 1 || x.Breakdown.SupersededBy != "" {
		t.Errorf("newer %+v and other origin %+v must not be superseded", n.Breakdown, x.Breakdown)
	}
	if !(o.Score < n.Score) || j < i {
		t.Errorf("older at %d (score %v) must rank under newer at %d (score %v)", j, o.Score, i, n.Score)
	}

	rec = recall(t, r, ctx, engram.RecallRequest{Query: "Robin commute train Leeds", TokenBudget: 2000, Fill: true})
	for _, m := range stored[3:5] {
		it, at := findItem(rec.Items, m.ID)
		if at < 0 || it.Breakdown.Superseded != 1 {
			t.Errorf("memory of one instant %q at %d: %+v", m.Content, at, it.Breakdown)
		}
	}

	// Another category, a key and P0 are exempt; the factor 1 is off.
	exempt := addMemories(t, db, ctx,
		&engram.Memory{Category: engram.CategoryLife, Content: "Sam's favourite biscuit is the ginger snap from Bristol", Source: chat, OccurredAt: at(1)},
		&engram.Memory{Category: engram.CategoryWork, Content: "Sam's favourite biscuit is the shortbread snap from Bristol", Source: chat, OccurredAt: at(9)},
		&engram.Memory{Category: engram.CategoryLife, Content: "Lee's hometown bakery sells rye bread every Tuesday", Source: chat, OccurredAt: at(1), Priority: engram.P0},
		&engram.Memory{Category: engram.CategoryLife, Content: "Lee's hometown bakery sells spelt bread every Tuesday", Source: chat, OccurredAt: at(9)},
	)
	cfg := learning.DefaultScoreConfig()
	cfg.SupersededFactor = 1
	off := learning.NewRecaller(indextest.Wrap(db), fixedRouter{all}, learning.NewScorer(cfg, time.Now), storetest.Tokenizer(t), engram.DefaultRecallConfig(), time.Now)
	for _, q := range []string{"Sam favourite biscuit snap", "Lee hometown bakery bread"} {
		rec := recall(t, r, ctx, engram.RecallRequest{Query: q, TokenBudget: 2000, Fill: true})
		for _, m := range exempt {
			if it, at := findItem(rec.Items, m.ID); at >= 0 && it.Breakdown.Superseded != 1 {
				t.Errorf("%q: exempt memory %q superseded: %+v", q, m.Content, it.Breakdown)
			}
		}
	}
	rec = recall(t, off, ctx, engram.RecallRequest{Query: "what tea does Dana like", TokenBudget: 2000, Fill: true})
	if o, j := findItem(rec.Items, older.ID); j < 0 || o.Breakdown.Superseded != 1 {
		t.Errorf("superseded_factor 1: older at %d with %+v", j, o.Breakdown)
	}
}
