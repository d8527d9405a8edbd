package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// sameHits fails unless two indexes answer the queries alike.
func sameHits(t *testing.T, a, b *index.Index, ctx context.Context, queries ...string) {
	t.Helper()
	for _, q := range queries {
		for _, agent := range []string{"", "nurse"} {
			x, err := a.SearchMemories(ctx, engram.LexicalQuery{Text: q, AgentID: agent, Limit: 20, Expand: true})
			if err != nil {
				t.Fatal(err)
			}
			y, err := b.SearchMemories(ctx, engram.LexicalQuery{Text: q, AgentID: agent, Limit: 20, Expand: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(x) != len(y) || len(x) == 0 {
				t.Fatalf("%q: %d hits vs %d", q, len(x), len(y))
			}
			for i := range x {
				if x[i].Memory.ID != y[i].Memory.ID || x[i].Score != y[i].Score {
					t.Fatalf("%q #%d: %s %v vs %s %v", q, i, x[i].Memory.ID, x[i].Score, y[i].Memory.ID, y[i].Score)
				}
			}
		}
	}
}

func fill(t *testing.T, db *store.DB, ctx context.Context, prefix string, n int) []string {
	t.Helper()
	var ms []*engram.Memory
	for i := range n {
		m := &engram.Memory{Content: fmt.Sprintf("%sheron %d nests near pond %d 苍鹭 %d", prefix, i, i%7, i%3), Category: "life",
			Tags: []string{fmt.Sprint("t", i%5)}, Context: fmt.Sprint("asked about heron ", i%11)}
		if i%4 == 0 {
			m.AgentID = "nurse"
		}
		ms = append(ms, m)
	}
	res, err := db.CreateMemories(ctx, ms)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(res))
	for i, r := range res {
		ids[i] = r.Memory.ID
	}
	return ids
}

// A cold tenant loads from its snapshot file and the changes after it, and
// answers exactly as an index loaded from the store.
func TestSnapshotLoadsLikeTheStore(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		dir := t.TempDir()
		ids := fill(t, db, ctx, "", 300)
		ix := index.New(db, index.Config{RowCache: 10, Dir: dir})
		defer ix.Close()
		if err := ix.Snapshot(ctx); err != nil {
			t.Fatal(err)
		}
		// Changes after the snapshot: edits, a delete, new memories.
		if _, err := db.UpdateMemory(ctx, ids[1], engram.MemoryUpdate{Content: ptr("heron moved to the river")}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeleteMemory(ctx, ids[2], nil); err != nil {
			t.Fatal(err)
		}
		fill(t, db, ctx, "new ", 20)
		warm := index.New(db, index.Config{RowCache: 10, Dir: dir})
		st, err := warm.Load(ctx, true)
		if err != nil || st.Docs != 319 || st.Seq != 322 {
			t.Fatalf("from the snapshot: %+v %v", st, err)
		}
		plain := index.New(db, index.Config{})
		sameHits(t, warm, plain, ctx, "heron pond", "苍鹭", "river heron t3", "asked about heron 5")

		// A damaged file is ignored: the tenant loads from the store.
		path := filepath.Join(dir, engram.TenantFromContext(ctx)+".idx")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b[:len(b)/2], 0o600); err != nil {
			t.Fatal(err)
		}
		cold := index.New(db, index.Config{Dir: dir})
		if st, err := cold.Load(ctx, true); err != nil || st.Docs != 319 {
			t.Fatalf("from a damaged snapshot: %+v %v", st, err)
		}
		sameHits(t, cold, plain, ctx, "heron pond", "river")
	})
}

// gapFeed hides one change of the feed, as folding events does to a
// snapshot older than the fold.
type gapFeed struct {
	*store.DB
	hide int64
}

func (g gapFeed) Changes(ctx context.Context, after int64, limit int) ([]*engram.Change, error) {
	cs, err := g.DB.Changes(ctx, after, limit)
	out := cs[:0]
	for _, c := range cs {
		if c.Seq != g.hide {
			out = append(out, c)
		}
	}
	return out, err
}

// A gap in the feed after a snapshot makes the tenant load from the store
// instead of applying changes onto the wrong state.
func TestSnapshotGapLoadsFromTheStore(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	dir := t.TempDir()
	ids := fill(t, db, ctx, "", 100)
	ix := index.New(db, index.Config{Dir: dir})
	if err := ix.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := ix.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateMemory(ctx, ids[1], engram.MemoryUpdate{Content: ptr("egret by the lake")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateMemory(ctx, ids[1], engram.MemoryUpdate{Content: ptr("egret by the sea")}); err != nil {
		t.Fatal(err)
	}
	gapped := index.New(gapFeed{db, st.Seq + 1}, index.Config{Dir: dir})
	hits, err := gapped.SearchMemories(ctx, engram.LexicalQuery{Text: "egret lake sea", Limit: 5})
	if err != nil || len(hits) != 1 || hits[0].Memory.Content != "egret by the sea" {
		t.Fatalf("hits %+v %v", hits, err)
	}
	sameHits(t, gapped, index.New(db, index.Config{}), ctx, "heron pond", "egret sea")
	if _, err := os.Stat(filepath.Join(dir, engram.TenantFromContext(ctx)+".idx")); !os.IsNotExist(err) {
		t.Fatalf("the unusable snapshot is still there: %v", err)
	}
}
