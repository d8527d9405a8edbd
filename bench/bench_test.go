package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// services wires a fresh SQLite store the way cmd/engram does.
func services(tb testing.TB) (Services, *store.DB) {
	db := storetest.Open(tb, "sqlite")
	routes := router.NewService(router.New(router.DefaultConfig()), db, 0)
	rec := learning.NewRecaller(db, routes, learning.NewScorer(learning.DefaultScoreConfig(), time.Now),
		storetest.Tokenizer(tb), engram.DefaultRecallConfig(), time.Now)
	return Services{Auth: db, Memories: db, Recall: rec, Router: routes}, db
}

func TestLatencyHarness(t *testing.T) {
	svc, db := services(t)
	rows, err := RunLatency(context.Background(), svc, db, LatencyOptions{Sizes: []int{300}, Budgets: []int{100, 400}, Queries: 20, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].MeanUsed > 100 || rows[1].MeanUsed > 400 || rows[1].MeanItems == 0 {
		t.Fatalf("rows %+v", rows)
	}
	var out bytes.Buffer
	PrintLatency(&out, rows)
	if !strings.Contains(out.String(), "| 300 | 400 |") {
		t.Fatalf("table:\n%s", out.String())
	}
}

// BenchmarkRecall measures one recall on a generated 10,000-memory tenant.
func BenchmarkRecall(b *testing.B) {
	svc, db := services(b)
	ctx := context.Background()
	if _, err := RunLatency(ctx, svc, db, LatencyOptions{Sizes: []int{10000}, Budgets: []int{500}, Queries: 1, Seed: 1}, nil); err != nil {
		b.Fatal(err)
	}
	tctx, _ := tenantCtx(ctx, svc.Auth, "latency-10000")
	gen := newCorpus(7)
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = gen.words(4)
	}
	for _, budget := range []int{500, 2000} {
		b.Run(map[int]string{500: "budget500", 2000: "budget2000"}[budget], func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := svc.Recall.Recall(tctx, learningRequest(queries[i%len(queries)], budget)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func learningRequest(q string, budget int) engram.RecallRequest {
	return engram.RecallRequest{Query: q, TokenBudget: budget}
}
