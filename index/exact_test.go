package index

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// bruteBM25 scores every live memory the agent may see against the query
// terms from scratch: the reference the index must equal.
func bruteBM25(t *testing.T, db *store.DB, ctx context.Context, query, agent string) map[string]float64 {
	t.Helper()
	type docTF struct {
		id string
		tf map[string]uint32
		dl float64
	}
	var docs []docTF
	var total float64
	df := map[string]int{}
	var visible []bool
	if _, err := db.EachLive(ctx, func(m *engram.Memory) error {
		tf, dl := rankTerms(m)
		docs = append(docs, docTF{m.ID, tf, float64(dl) / 10})
		visible = append(visible, m.AgentID == "" || m.AgentID == agent)
		total += float64(dl) / 10
		for term := range tf {
			df[term]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := float64(len(docs))
	avgdl := total / n
	out := map[string]float64{}
	for i, d := range docs {
		if !visible[i] {
			continue
		}
		var s float64
		for _, term := range analysis.QueryTerms(query) {
			f := float64(d.tf[term]) / 10
			if f == 0 {
				continue
			}
			w := math.Log(1 + (n-float64(df[term])+0.5)/(float64(df[term])+0.5))
			s += w * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*d.dl/avgdl))
		}
		if s > 0 {
			out[d.id] = s
		}
	}
	return out
}

// TestSearchEqualsBruteForceBM25: the index's top k is exactly the top k
// of BM25 computed from scratch over every query term — common terms
// included — after creates, edits, deletes and private memories, on both
// engines.
func TestSearchEqualsBruteForceBM25(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		ix := New(db, Config{RowCache: 50})
		rng := rand.New(rand.NewPCG(7, 9))
		vocab := strings.Fields("apple river stone cloud lamp 咖啡 牙科 会议 北京 tiger ocean paper violin garden " +
			"rocket silver window meadow thunder 报告 周末 旅行 piano forest")
		zipf := rand.NewZipf(rng, 1.2, 1, uint64(len(vocab)-1))
		words := func(k int) string {
			w := make([]string, k)
			for i := range w {
				w[i] = vocab[zipf.Uint64()]
			}
			return strings.Join(w, " ")
		}
		var ids []string
		batch := func(n int) {
			for range n {
				m := &engram.Memory{Content: words(3 + rng.IntN(12)), Category: "life", Context: words(rng.IntN(4)),
					Tags: []string{vocab[rng.IntN(len(vocab))]}}
				if rng.IntN(5) == 0 {
					m.AgentID = "nurse"
				}
				ids = append(ids, mustCreate(t, db, ctx, m).ID)
			}
		}
		check := func(stage string) {
			t.Helper()
			for i := range 15 {
				q := words(2 + i%5)
				for _, agent := range []string{"", "nurse"} {
					want := bruteBM25(t, db, ctx, q, agent)
					const k = 20
					hits, err := ix.SearchMemories(ctx, engram.LexicalQuery{Text: q, AgentID: agent, Limit: k})
					if err != nil {
						t.Fatal(err)
					}
					ranked := make([]string, 0, len(want))
					for id := range want {
						ranked = append(ranked, id)
					}
					sort.Slice(ranked, func(a, b int) bool { return want[ranked[a]] > want[ranked[b]] })
					if len(hits) != min(k, len(ranked)) {
						t.Fatalf("%s %q: %d hits, brute force %d", stage, q, len(hits), min(k, len(ranked)))
					}
					for j, h := range hits {
						if math.Abs(h.Score-want[h.Memory.ID]) > 1e-9 || math.Abs(h.Score-want[ranked[j]]) > 1e-9 {
							t.Fatalf("%s %q #%d: index %s %.12f, brute force %s %.12f", stage, q, j,
								h.Memory.ID, h.Score, ranked[j], want[ranked[j]])
						}
					}
				}
			}
		}
		batch(150)
		check("created")
		for range 40 {
			id := ids[rng.IntN(len(ids))]
			if _, err := db.UpdateMemory(ctx, id, engram.MemoryUpdate{Content: ptr(words(2 + rng.IntN(20)))}); err != nil &&
				engram.ErrorCode(err) != engram.ECONFLICT {
				t.Fatal(err)
			}
		}
		for range 20 {
			if _, err := db.DeleteMemory(ctx, ids[rng.IntN(len(ids))], nil); err != nil && engram.ErrorCode(err) != engram.ECONFLICT {
				t.Fatal(err)
			}
		}
		batch(50)
		check("changed")
		if st, err := ix.Stats(ctx); err != nil || st.Docs == 0 {
			t.Fatalf("stats %+v %v", st, err)
		}
	})
}

func mustCreate(t *testing.T, db *store.DB, ctx context.Context, m *engram.Memory) *engram.Memory {
	t.Helper()
	res, err := db.CreateMemory(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	return res.Memory
}

func ptr[T any](v T) *T { return &v }
