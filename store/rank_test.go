package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

func search(t *testing.T, db *store.DB, ctx context.Context, text string) []engram.LexicalHit {
	t.Helper()
	hits, err := db.SearchMemories(ctx, engram.LexicalQuery{Text: text, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func contents(hits []engram.LexicalHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Memory.Content
	}
	return out
}

func TestSearchRanksBilingual(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		for _, c := range []string{
			"我喜欢喝咖啡，不加糖", "下周三上午十点牙科复诊", "She has been painting sunrises at the lake",
			"The quarterly report is due Friday", "咖啡机坏了，周一找人修", "Caroline went to the LGBTQ support group",
		} {
			mustCreate(t, db, ctx, &engram.Memory{Content: c, Category: "life"})
		}
		for q, want := range map[string]string{
			"咖啡":                        "我喜欢喝咖啡，不加糖",
			"牙科":                        "下周三上午十点牙科复诊",
			"when did she paint?":       "She has been painting sunrises at the lake",
			"support groups":            "Caroline went to the LGBTQ support group",
			`"report" AND due* -x OR (`: "The quarterly report is due Friday",
		} {
			hits := search(t, db, ctx, q)
			if len(hits) == 0 || hits[0].Memory.Content != want {
				t.Errorf("%q: got %q, want %q first", q, contents(hits), want)
			}
		}
		if n := len(search(t, db, ctx, "咖啡")); n != 2 {
			t.Errorf("咖啡 matched %d, want 2", n)
		}
		for _, q := range []string{"🙂", "!!!", "'; DROP TABLE memories; --", "the of and"} {
			if hits := search(t, db, ctx, q); len(hits) != 0 && q != "'; DROP TABLE memories; --" {
				t.Errorf("%q matched %q", q, contents(hits))
			}
		}
	})
}

// Another tenant's data never moves a tenant's scores: BM25 statistics
// are per tenant.
func TestSearchScoresIsolatedPerTenant(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		a := storetest.Tenant(t, db, "alpha")
		b := storetest.Tenant(t, db, "beta")
		mustCreate(t, db, a, &engram.Memory{Content: "falcon launch moved to march", Category: "work"})
		mustCreate(t, db, a, &engram.Memory{Content: "weekly launch review with design", Category: "work"})
		before := search(t, db, a, "falcon launch review")
		for i := range 50 {
			mustCreate(t, db, b, &engram.Memory{Content: fmt.Sprint("falcon falcon notes ", i), Category: "work"})
		}
		after := search(t, db, a, "falcon launch review")
		if len(before) != 2 || len(after) != 2 {
			t.Fatalf("hits %d %d", len(before), len(after))
		}
		for i := range before {
			if before[i].Memory.ID != after[i].Memory.ID || before[i].Score != after[i].Score {
				t.Fatalf("beta's writes moved alpha's scores: %v → %v", before[i].Score, after[i].Score)
			}
		}
		for _, h := range search(t, db, b, "launch review design march") {
			t.Fatalf("beta found alpha's %q", h.Memory.Content)
		}
	})
}

// The ranking index follows every change: update, delete, archive,
// rollback, expiry and agent privacy.
func TestSearchFollowsChanges(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		o := storetest.Options(t, engine)
		o.Now = func() time.Time { return now }
		db := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, db, "acme")
		m := mustCreate(t, db, ctx, &engram.Memory{Content: "kiwi smoothie recipe", Category: "life"})
		if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Content: ptr("mango smoothie recipe")}); err != nil {
			t.Fatal(err)
		}
		if len(search(t, db, ctx, "kiwi")) != 0 || len(search(t, db, ctx, "mango")) != 1 {
			t.Fatal("update not reflected")
		}
		if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Archived: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if len(search(t, db, ctx, "mango")) != 0 {
			t.Fatal("archived memories never qualify")
		}
		if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Archived: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeleteMemory(ctx, m.ID, nil); err != nil {
			t.Fatal(err)
		}
		if len(search(t, db, ctx, "mango")) != 0 {
			t.Fatal("tombstoned memories never qualify")
		}
		if _, err := db.RollbackMemory(ctx, m.ID, 1, nil); err != nil {
			t.Fatal(err)
		}
		if hits := search(t, db, ctx, "kiwi"); len(hits) != 1 {
			t.Fatal("rollback not reflected")
		}
		soon := now.Add(time.Hour)
		mustCreate(t, db, ctx, &engram.Memory{Content: "kiwi delivery today", Category: "life", ExpiresAt: &soon})
		mustCreate(t, db, ctx, &engram.Memory{Content: "kiwi allergy note", Category: "life", AgentID: "nurse"})
		if n := len(search(t, db, ctx, "kiwi")); n != 2 {
			t.Fatalf("shared view: %d hits", n)
		}
		hits, _ := db.SearchMemories(ctx, engram.LexicalQuery{Text: "kiwi", AgentID: "nurse", Limit: 10})
		if len(hits) != 3 {
			t.Fatalf("agent view: %d hits", len(hits))
		}
		now = now.Add(2 * time.Hour)
		if n := len(search(t, db, ctx, "kiwi")); n != 1 {
			t.Fatalf("expired memories never qualify: %d hits", n)
		}
	})
}

// Expansion reads the statistics of a bounded number of terms: a top
// match with tens of thousands of distinct bigrams must not exceed what
// one statement can bind.
func TestSearchExpandsHugeMemory(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		var b strings.Builder
		for i := 0; b.Len() < 3*30000; i++ {
			b.WriteRune(rune(0x4e00 + (i*7919)%20000)) // distinct CJK bigrams
		}
		huge := "咖啡" + b.String()
		mustCreate(t, db, ctx, &engram.Memory{Content: string([]rune(huge)[:30000]), Category: "life"})
		mustCreate(t, db, ctx, &engram.Memory{Content: "咖啡不加糖", Category: "life"})
		hits, err := db.SearchMemories(ctx, engram.LexicalQuery{Text: "咖啡", Limit: 10, Expand: true})
		if err != nil || len(hits) != 2 {
			t.Fatalf("hits %d, err %v", len(hits), err)
		}
	})
}
