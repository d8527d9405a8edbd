package index_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

func mustCreate(t *testing.T, db *store.DB, ctx context.Context, m *engram.Memory) *engram.Memory {
	t.Helper()
	res, err := db.CreateMemory(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	return res.Memory
}

func ptr[T any](v T) *T { return &v }

func search(t *testing.T, ix *index.Index, ctx context.Context, text string) []engram.LexicalHit {
	t.Helper()
	hits, err := ix.SearchMemories(ctx, engram.LexicalQuery{Text: text, Limit: 10})
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
		ix := index.New(db, index.Config{RowCache: 100})
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
			hits := search(t, ix, ctx, q)
			if len(hits) == 0 || hits[0].Memory.Content != want {
				t.Errorf("%q: got %q, want %q first", q, contents(hits), want)
			}
		}
		if n := len(search(t, ix, ctx, "咖啡")); n != 2 {
			t.Errorf("咖啡 matched %d, want 2", n)
		}
		for _, q := range []string{"🙂", "!!!", "the of and"} {
			if hits := search(t, ix, ctx, q); len(hits) != 0 {
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
		ix := index.New(db, index.Config{RowCache: 100})
		a := storetest.Tenant(t, db, "alpha")
		b := storetest.Tenant(t, db, "beta")
		mustCreate(t, db, a, &engram.Memory{Content: "falcon launch moved to march", Category: "work"})
		mustCreate(t, db, a, &engram.Memory{Content: "weekly launch review with design", Category: "work"})
		before := search(t, ix, a, "falcon launch review")
		for i := range 50 {
			mustCreate(t, db, b, &engram.Memory{Content: fmt.Sprint("falcon falcon notes ", i), Category: "work"})
		}
		if n := len(search(t, ix, b, "falcon")); n != 10 {
			t.Fatalf("beta: %d hits", n)
		}
		after := search(t, ix, a, "falcon launch review")
		if len(before) != 2 || len(after) != 2 {
			t.Fatalf("hits %d %d", len(before), len(after))
		}
		for i := range before {
			if before[i].Memory.ID != after[i].Memory.ID || before[i].Score != after[i].Score {
				t.Fatalf("beta's writes moved alpha's scores: %v → %v", before[i].Score, after[i].Score)
			}
		}
		for _, h := range search(t, ix, b, "launch review design march") {
			t.Fatalf("beta found alpha's %q", h.Memory.Content)
		}
	})
}

// The index follows every change: update, delete, archive, rollback,
// expiry and agent privacy, and the rows it caches follow feedback.
func TestSearchFollowsChanges(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		o := storetest.Options(t, engine)
		o.Now = clock
		db := storetest.OpenWith(t, o)
		ix := index.New(db, index.Config{RowCache: 100, Now: clock})
		ctx := storetest.Tenant(t, db, "acme")
		m := mustCreate(t, db, ctx, &engram.Memory{Content: "kiwi smoothie recipe", Category: "life"})
		if len(search(t, ix, ctx, "kiwi")) != 1 {
			t.Fatal("create not reflected")
		}
		if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Content: ptr("mango smoothie recipe")}); err != nil {
			t.Fatal(err)
		}
		if len(search(t, ix, ctx, "kiwi")) != 0 {
			t.Fatal("update not reflected")
		}
		if hits := search(t, ix, ctx, "mango"); len(hits) != 1 || hits[0].Memory.Content != "mango smoothie recipe" {
			t.Fatalf("update not reflected: %q", contents(hits))
		}
		if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Confidence: ptr(0.25)}); err != nil {
			t.Fatal(err)
		}
		if hits := search(t, ix, ctx, "mango"); len(hits) != 1 || hits[0].Memory.Confidence != 0.25 {
			t.Fatalf("a cached row outlived its change: %+v", hits)
		}
		if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Archived: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		if len(search(t, ix, ctx, "mango")) != 0 {
			t.Fatal("archived memories never qualify")
		}
		if _, err := db.UpdateMemory(ctx, m.ID, engram.MemoryUpdate{Archived: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeleteMemory(ctx, m.ID, nil); err != nil {
			t.Fatal(err)
		}
		if len(search(t, ix, ctx, "mango")) != 0 {
			t.Fatal("tombstoned memories never qualify")
		}
		if _, err := db.RollbackMemory(ctx, m.ID, 1, nil); err != nil {
			t.Fatal(err)
		}
		if hits := search(t, ix, ctx, "kiwi"); len(hits) != 1 {
			t.Fatal("rollback not reflected")
		}
		soon := now.Add(time.Hour)
		mustCreate(t, db, ctx, &engram.Memory{Content: "kiwi delivery today", Category: "life", ExpiresAt: &soon})
		mustCreate(t, db, ctx, &engram.Memory{Content: "kiwi allergy note", Category: "life", AgentID: "nurse"})
		if n := len(search(t, ix, ctx, "kiwi")); n != 2 {
			t.Fatalf("shared view: %d hits", n)
		}
		hits, _ := ix.SearchMemories(ctx, engram.LexicalQuery{Text: "kiwi", AgentID: "nurse", Limit: 10})
		if len(hits) != 3 {
			t.Fatalf("agent view: %d hits", len(hits))
		}
		now = now.Add(2 * time.Hour)
		if n := len(search(t, ix, ctx, "kiwi")); n != 1 {
			t.Fatalf("expired memories never qualify: %d hits", n)
		}
		// A fresh index loaded from the store agrees with the one that
		// followed the changes.
		fresh := index.New(db, index.Config{Now: clock})
		a, b := search(t, ix, ctx, "kiwi mango smoothie recipe note"), search(t, fresh, ctx, "kiwi mango smoothie recipe note")
		if fmt.Sprint(contents(a)) != fmt.Sprint(contents(b)) || a[0].Score != b[0].Score {
			t.Fatalf("followed %q, loaded %q", contents(a), contents(b))
		}
	})
}

// Expansion draws its terms from the rows it fetched: a top match with
// tens of thousands of distinct bigrams is weighed in memory.
func TestSearchExpandsHugeMemory(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ix := index.New(db, index.Config{RowCache: 100})
		ctx := storetest.Tenant(t, db, "acme")
		var b strings.Builder
		for i := 0; b.Len() < 3*30000; i++ {
			b.WriteRune(rune(0x4e00 + (i*7919)%20000)) // distinct CJK bigrams
		}
		huge := "咖啡" + b.String()
		mustCreate(t, db, ctx, &engram.Memory{Content: string([]rune(huge)[:30000]), Category: "life"})
		mustCreate(t, db, ctx, &engram.Memory{Content: "咖啡不加糖", Category: "life"})
		hits, err := ix.SearchMemories(ctx, engram.LexicalQuery{Text: "咖啡", Limit: 10, Expand: true})
		if err != nil || len(hits) != 2 {
			t.Fatalf("hits %d, err %v", len(hits), err)
		}
	})
}

// TestSearchExpansionWithinClearance: pseudo-relevance feedback reads only
// the memories the reader in ctx may read in clear. With a reader of
// clearance internal, the confidential memories that match best are passed
// over and the next best public one expands the query in their place, so
// the words of neither reach the ranking ("tangerine" does not surface the
// smoothies); a secret reader, and a search without a reader (the
// server's own), are expanded by them as before.
func TestSearchExpansionWithinClearance(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ix := index.New(db, index.Config{RowCache: 100})
		ctx := storetest.Tenant(t, db, "acme")
		for i := range 20 {
			mustCreate(t, db, ctx, &engram.Memory{Content: fmt.Sprint("Filler note number ", i), Category: "work", SecurityLevel: "public"})
		}
		mustCreate(t, db, ctx, &engram.Memory{Content: "Tangerine smoothies are sold in the kiosk on Fridays", Category: "work", SecurityLevel: "public"})
		mustCreate(t, db, ctx, &engram.Memory{Content: "Visitors sign in at reception", Category: "work", SecurityLevel: "public"})
		mustCreate(t, db, ctx, &engram.Memory{Content: "Ask for the guest wifi password at the reception desk downstairs", Category: "work", SecurityLevel: "public"})
		for i := range 4 { // more than the feedback reads
			mustCreate(t, db, ctx, &engram.Memory{Content: fmt.Sprint("The wifi password is tangerine ", i), Category: "work", SecurityLevel: "confidential"})
		}
		found := func(ctx context.Context, word string) bool {
			t.Helper()
			hits, err := ix.SearchMemories(ctx, engram.LexicalQuery{Text: "wifi password", Limit: 10, Expand: true})
			if err != nil {
				t.Fatal(err)
			}
			return strings.Contains(strings.Join(contents(hits), "\n"), word)
		}
		for _, withhold := range []string{engram.WithholdOmit, engram.WithholdMask} {
			internal := engram.NewContextWithReader(ctx, engram.Reader{Clearance: "internal", Withhold: withhold})
			if found(internal, "smoothies") || !found(internal, "Visitors") {
				t.Errorf("withhold=%s: an internal reader's expansion does not follow its clearance", withhold)
			}
		}
		if !found(engram.NewContextWithReader(ctx, engram.Reader{Clearance: "secret"}), "smoothies") || !found(ctx, "smoothies") {
			t.Error("a secret reader's, or the server's own, expansion no longer reads the confidential memories")
		}
	})
}

// TestTwoServersSearchAlike: two engram servers on one database, each with
// its own index, find a write made through either before their next
// search.
func TestTwoServersSearchAlike(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		db1, db2 := storetest.OpenWith(t, o), storetest.OpenWith(t, o)
		ix1, ix2 := index.New(db1, index.Config{RowCache: 100}), index.New(db2, index.Config{RowCache: 100})
		ctx := storetest.Tenant(t, db1, "acme")
		same := func(q string, want int) {
			t.Helper()
			a, b := search(t, ix1, ctx, q), search(t, ix2, ctx, q)
			if len(a) != want || len(b) != want {
				t.Fatalf("%q: server one %q, server two %q, want %d each", q, contents(a), contents(b), want)
			}
			for i := range a {
				if a[i].Memory.ID != b[i].Memory.ID || a[i].Score != b[i].Score || a[i].Memory.Version != b[i].Memory.Version {
					t.Fatalf("%q: servers differ at %d: %+v vs %+v", q, i, a[i], b[i])
				}
			}
		}
		same("walrus", 0) // both loaded before the writes
		var ids []string
		for i := range 20 {
			ids = append(ids, mustCreate(t, db1, ctx, &engram.Memory{Content: fmt.Sprintf("walrus sighting %d at the pier", i), Category: "life"}).ID)
		}
		same("walrus pier", 10)
		for _, id := range ids[:15] {
			if _, err := db2.UpdateMemory(ctx, id, engram.MemoryUpdate{Content: ptr("seal sighting at the dock " + id)}); err != nil {
				t.Fatal(err)
			}
		}
		same("walrus", 5)
		same("seal dock", 10)
		for _, id := range ids[15:] {
			if _, err := db2.DeleteMemory(ctx, id, nil); err != nil {
				t.Fatal(err)
			}
		}
		same("walrus", 0)
	})
}

// Past the memory bound the least recently used tenant is dropped and
// reloaded when next searched, with the same answers.
func TestEvictsLeastRecentlyUsed(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ix := index.New(db, index.Config{MaxBytes: 1, RowCache: 10})
	a := storetest.Tenant(t, db, "alpha")
	b := storetest.Tenant(t, db, "beta")
	mustCreate(t, db, a, &engram.Memory{Content: "otter den by the river", Category: "life"})
	mustCreate(t, db, b, &engram.Memory{Content: "otter plush for the kid", Category: "life"})
	first := search(t, ix, a, "otter")
	if st, _ := ix.Stats(a); st.Docs != 1 || st.Bytes <= 0 {
		t.Fatalf("alpha stats %+v", st)
	}
	search(t, ix, b, "otter")
	if got := ix.Tenants(); len(got) != 1 || got[0] != engram.TenantFromContext(b) {
		t.Fatalf("tenants kept %v, want beta alone", got)
	}
	again := search(t, ix, a, "otter")
	if len(first) != 1 || len(again) != 1 || first[0].Score != again[0].Score {
		t.Fatalf("reloaded alpha answers %+v, before %+v", again, first)
	}
}

// Searches running while memories are written and tenants evicted see a
// consistent index (run with -race), and end where a fresh load does.
func TestConcurrentSearchesAndWrites(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	other := storetest.Tenant(t, db, "other")
	ix := index.New(db, index.Config{RowCache: 20, MaxBytes: 40_000})
	done := make(chan struct{})
	errs := make(chan error, 8)
	for g := range 4 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				c := ctx
				if g%2 == 1 {
					c = other
				}
				if _, err := ix.SearchMemories(c, engram.LexicalQuery{Text: "lynx forest tracks", Limit: 10, Expand: true}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 60 {
		c := ctx
		if i%3 == 0 {
			c = other
		}
		m := mustCreate(t, db, c, &engram.Memory{Content: fmt.Sprintf("lynx tracks %d in the forest", i), Category: "life"})
		if i%5 == 0 {
			if _, err := db.UpdateMemory(c, m.ID, engram.MemoryUpdate{Content: ptr(fmt.Sprintf("lynx den %d", i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	fresh := index.New(db, index.Config{})
	for _, c := range []context.Context{ctx, other} {
		a, b := search(t, ix, c, "lynx forest den"), search(t, fresh, c, "lynx forest den")
		if fmt.Sprint(contents(a)) != fmt.Sprint(contents(b)) {
			t.Fatalf("followed %q, loaded %q", contents(a), contents(b))
		}
	}
}

// creditor posts feedback on recalls of the memories through the
// learning package's feedback service.
type creditor struct {
	db     *store.DB
	policy *learning.Feedback
	n      int
}

func newCreditor(db *store.DB) *creditor {
	return &creditor{db: db, policy: learning.NewFeedback(db, learning.NewScorer(learning.NewScoreConfig(configs.Default().Scoring), time.Now),
		engram.DefaultFeedbackConfig())}
}

// credit thumbs a recall of ms; long queries, so that the learned text is
// trimmed and old queries are dropped as new ones come.
func (c *creditor) credit(t *testing.T, ctx context.Context, thumb string, ms ...*engram.Memory) {
	t.Helper()
	c.n++
	query := fmt.Sprintf("when does the ferry %d leave %s", c.n, strings.Repeat(fmt.Sprint("timetable", c.n, " "), 40))
	r := &engram.Recall{Query: query, TokenBudget: 100, CreatedAt: time.Now()}
	for j, m := range ms {
		r.Items = append(r.Items, engram.RecallItem{ID: m.ID, Version: 1, Category: "life", Score: 1 - 0.1*float64(j)})
	}
	if err := c.db.SaveRecall(ctx, r, "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.policy.SubmitFeedback(ctx, engram.FeedbackInput{RecallID: r.ID, Thumb: thumb, Rater: fmt.Sprint("r", c.n)}); err != nil {
		t.Fatal(err)
	}
}

// sameAsFresh fails unless ix answers like an index loaded afresh.
func sameAsFresh(t *testing.T, db *store.DB, ix *index.Index, ctx context.Context) {
	t.Helper()
	fresh := index.New(db, index.Config{RowCache: 100})
	for _, q := range []string{"harbour ferry", "timetable3", "timetable11 ferry", "when does the ferry leave", "timetable1"} {
		a, b := search(t, ix, ctx, q), search(t, fresh, ctx, q)
		if len(a) != len(b) {
			t.Fatalf("%q: following %q, fresh %q", q, contents(a), contents(b))
		}
		for i := range a {
			if a[i].Memory.ID != b[i].Memory.ID || a[i].Score != b[i].Score || a[i].Memory.Version != b[i].Memory.Version ||
				a[i].Memory.Reward != b[i].Memory.Reward || a[i].Memory.Learned != b[i].Memory.Learned {
				t.Fatalf("%q: following and fresh differ at %d: %+v vs %+v", q, i, a[i].Memory, b[i].Memory)
			}
		}
	}
	s1, err := ix.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := fresh.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s1.Terms != s2.Terms || s1.Postings != s2.Postings || s1.Docs != s2.Docs {
		t.Errorf("following: %+v; fresh: %+v", s1, s2)
	}
}

func ferryNotes(t *testing.T, db *store.DB, ctx context.Context) []*engram.Memory {
	t.Helper()
	var ms []*engram.Memory
	for i := range 6 {
		ms = append(ms, mustCreate(t, db, ctx, &engram.Memory{Content: fmt.Sprintf("harbour note %d: the ferry leaves at %d", i, 7+i), Category: "life"}))
	}
	return ms
}

// TestCreditsFollowedLikeALoad: feedback credits reach an index that
// follows the feed as deltas (new versions and learned queries), and it
// then answers exactly like an index loaded afresh from the store, on
// both engines: the learned queries it adds and drops move the same
// postings, and no stale row is served.
func TestCreditsFollowedLikeALoad(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := engram.NewContextWithActor(storetest.Tenant(t, db, "acme"), engram.Actor{KeyID: "k"})
		ix := index.New(db, index.Config{RowCache: 100})
		ms := ferryNotes(t, db, ctx)
		search(t, ix, ctx, "harbour ferry") // loaded and rows cached before the credits
		c := newCreditor(db)
		for i := range 12 {
			thumb := engram.ThumbUp
			if i%4 == 3 {
				thumb = engram.ThumbDown
			}
			c.credit(t, ctx, thumb, ms[:3+i%3]...)
		}
		sameAsFresh(t, db, ix, ctx)
	})
}

// TestFoldedCreditsFollowed: the sleep cycle folds credits into the last
// of each run. An index that had applied all but that last event applies
// it as it stands; one that was further behind meets a gap and reloads;
// both then answer like a fresh index.
func TestFoldedCreditsFollowed(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := engram.NewContextWithActor(storetest.Tenant(t, db, "acme"), engram.Actor{KeyID: "k"})
		ms := ferryNotes(t, db, ctx)
		near, far := index.New(db, index.Config{RowCache: 100}), index.New(db, index.Config{RowCache: 100})
		search(t, far, ctx, "harbour ferry")
		c := newCreditor(db)
		for range 5 {
			c.credit(t, ctx, engram.ThumbUp, ms[:3]...)
		}
		search(t, near, ctx, "harbour ferry") // applied all but the last credit of each memory
		c.credit(t, ctx, engram.ThumbDown, ms[:3]...)
		folded, err := db.FoldFeedbackEvents(ctx, time.Now().Add(time.Hour))
		if err != nil || folded != 3*5 {
			t.Fatalf("folded %d (%v), want 15", folded, err)
		}
		sameAsFresh(t, db, near, ctx)
		sameAsFresh(t, db, far, ctx)
	})
}
