//go:build unix

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
)

// BenchmarkColdRecall measures a small tenant's first recall in process
// (engram serve's services, SQLite): each op is the first recall of
// another tenant of 100 memories, so the router model and the index load
// from the store. It reports the wall time and the process's CPU time per
// recall (every thread), which a shared machine's load distorts less.
//
//	go test -tags sqlite_fts5 -run '^$' -bench ColdRecall -benchtime 300x ./cmd/engram/
func BenchmarkColdRecall(b *testing.B) {
	cfg, err := configs.Load("", []string{"ENGRAM_DATA_DIR=" + b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	cfg.Server.LogLevel = "warn"
	logger := NewLogger(cfg, os.Stderr)
	ctx := context.Background()
	db, err := Open(ctx, cfg, logger)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx%d", i, rng.IntN(1000))
	}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	cats := []string{"work", "life", "preference", "emotion", "strategy"}
	tenants := make([]context.Context, b.N)
	for i := range tenants {
		t, err := db.EnsureTenant(ctx, fmt.Sprintf("cold%d-%d", b.N, i))
		if err != nil {
			b.Fatal(err)
		}
		tenants[i] = engram.NewContextWithTenant(ctx, t.ID)
		ms := make([]*engram.Memory, 100)
		for j := range ms {
			ms[j] = &engram.Memory{Content: words(8 + rng.IntN(24)), Category: cats[rng.IntN(len(cats))]}
		}
		if err := db.SeedMemories(tenants[i], ms); err != nil {
			b.Fatal(err)
		}
	}
	services, err := NewServices(cfg, db, logger)
	if err != nil {
		b.Fatal(err)
	}
	queries := make([]string, b.N)
	for i := range queries {
		queries[i] = words(3)
	}
	cpu0 := cpuNow(b)
	start := time.Now()
	b.ResetTimer()
	for i := range b.N {
		if _, err := services.Recall.Recall(tenants[i], engram.RecallRequest{Query: queries[i], TokenBudget: 500}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/1000, "ms/recall")
	b.ReportMetric(float64((cpuNow(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/recall")
}

// cpuNow is the CPU time the process has used, user and system.
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
