//go:build unix

package store_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// ingestCorpus makes memories like engram bench latency's: 8–31 words of
// a 5,000-word vocabulary, one of five categories, one of 200 tags.
type ingestCorpus struct {
	rng   *rand.Rand
	vocab []string
}

func newIngestCorpus(seed uint64) *ingestCorpus {
	rng := rand.New(rand.NewPCG(seed, 1))
	syll := []string{"ka", "lo", "mi", "ru", "sen", "ta", "vor", "el", "an", "dri", "po", "que", "zu", "bel", "cor", "fin"}
	vocab := make([]string, 5000)
	for i := range vocab {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		vocab[i] = b.String()
	}
	return &ingestCorpus{rng: rng, vocab: vocab}
}

func (c *ingestCorpus) memory() *engram.Memory {
	n := 8 + c.rng.IntN(24)
	words := make([]string, n)
	for i := range words {
		words[i] = c.vocab[c.rng.IntN(len(c.vocab))]
	}
	cats := []string{"work", "life", "preference", "emotion", "strategy"}
	return &engram.Memory{Content: strings.Join(words, " "), Category: cats[c.rng.IntN(len(cats))],
		Tags: []string{c.vocab[c.rng.IntN(200)]}, Source: []byte(`"bench"`)}
}

// ingestBatch is the batch size of engram bench latency's ingest column.
const ingestBatch = 500

func ingest(b *testing.B, db *store.DB, ctx context.Context, c *ingestCorpus, n int) {
	for done := 0; done < n; done += ingestBatch {
		ms := make([]*engram.Memory, min(ingestBatch, n-done))
		for i := range ms {
			ms[i] = c.memory()
		}
		if _, err := db.CreateMemories(ctx, ms); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkIngest measures batched ingest on SQLite — CreateMemories, 500
// memories a batch, each batch one transaction with its change-feed
// events — into a tenant that already holds ENGRAM_BENCH_INGEST_AT
// memories (default 100,000; filled before the timer starts, which takes
// a while). Run it with a fixed count, e.g. -benchtime 40x (20,000
// memories); it reports memories/s and the CPU time per memory.
// ENGRAM_BENCH_INGEST_DIR keeps the database in that directory, so that
// the next run (of this or another build) fills only what is missing.
//
//	ENGRAM_BENCH_INGEST_AT=100000 go test -tags sqlite_fts5 -run '^$' -bench Ingest -benchtime 40x ./store/
func BenchmarkIngest(b *testing.B) {
	at := 100_000
	if v := os.Getenv("ENGRAM_BENCH_INGEST_AT"); v != "" {
		var err error
		if at, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	o := storetest.Options(b, "sqlite")
	if dir := os.Getenv("ENGRAM_BENCH_INGEST_DIR"); dir != "" {
		o.DataDir = dir // kept: a later run finds the tenant filled
	}
	db := storetest.OpenWith(b, o)
	ctx := storetest.Tenant(b, db, "ingest")
	c := newIngestCorpus(1)
	counts, err := db.CountMemories(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var held int64
	for _, n := range counts {
		held += n
	}
	// A kept database's memories came from earlier streams: this one
	// starts where they ended, so that no memory repeats one already held.
	c.rng = rand.New(rand.NewPCG(uint64(held)+1, 2))
	ingest(b, db, ctx, c, max(0, at-int(held)))
	batches := 0
	cpu0 := cpuTime(b)
	for b.Loop() { // the fill above runs once, untimed
		ingest(b, db, ctx, c, ingestBatch)
		batches++
	}
	n := float64(batches * ingestBatch)
	b.ReportMetric(n/b.Elapsed().Seconds(), "memories/s")
	// On a shared machine the wall clock measures the neighbours; the
	// process's CPU time per memory (every thread: SQLite, Go, the GC)
	// measures the write path.
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/n, "cpu-µs/memory")
}
