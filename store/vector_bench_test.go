//go:build unix

package store_test

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"

	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// BenchmarkVectorSearch measures hybrid recall's vector search on SQLite:
// one query against every 512-dimension vector of a tenant (exact cosine),
// limit 75 as a recall asks, read from the store (the cache off) and from
// the vector cache (reloaded once a second, the default TTL, which the
// figure includes), and from the cache when every search finds its set
// older than the TTL: read since its last read (cache-read-since) or
// read whole (cache-read-whole, as once a minute). The sizes are ENGRAM_BENCH_VECTORS, comma-separated
// (default 1000,10000); filling a size (one SaveVector each) runs before
// the timer.
//
//	ENGRAM_BENCH_VECTORS=1000,10000,50000 go test -tags sqlite_fts5 -run '^$' -bench VectorSearch ./store/
func BenchmarkVectorSearch(b *testing.B) {
	sizes := []int{1000, 10000}
	if v := os.Getenv("ENGRAM_BENCH_VECTORS"); v != "" {
		sizes = sizes[:0]
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				b.Fatalf("ENGRAM_BENCH_VECTORS: %q", f)
			}
			sizes = append(sizes, n)
		}
	}
	const dims = 512
	rng := rand.New(rand.NewPCG(1, 2))
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, size := range sizes {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			o := storetest.Options(b, "sqlite")
			db := storetest.OpenWith(b, o)
			o.VectorCacheBytes = -1
			stored := storetest.OpenWith(b, o) // the same database, no cache
			ctx := storetest.Tenant(b, db, "vectors")
			c := newIngestCorpus(1)
			for done := 0; done < size; done += ingestBatch {
				ms := make([]*engram.Memory, min(ingestBatch, size-done))
				for i := range ms {
					ms[i] = c.memory()
				}
				res, err := db.CreateMemories(ctx, ms)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range res {
					if err := db.SaveVector(ctx, r.Memory.ID, "bench", vec()); err != nil {
						b.Fatal(err)
					}
				}
			}
			// Two more servers whose clocks the loop moves on before each
			// search: by 2 s, past the TTL, so that every search reads the
			// vectors saved since the last read; by a minute, so that every
			// search reads the set whole.
			var clock atomic.Int64
			clock.Store(time.Now().Add(time.Hour).UnixNano()) // after every save
			o.VectorCacheBytes, o.Now = 0, func() time.Time { return time.Unix(0, clock.Load()) }
			since, whole := storetest.OpenWith(b, o), storetest.OpenWith(b, o)
			q := vec()
			for _, s := range []struct {
				name string
				db   *store.DB
				step time.Duration
			}{{"store", stored, 0}, {"cache", db, 0}, {"cache-read-since", since, 2 * time.Second}, {"cache-read-whole", whole, time.Minute}} {
				b.Run(s.name, func(b *testing.B) {
					for b.Loop() {
						clock.Add(int64(s.step))
						hits, err := s.db.VectorSearch(ctx, "bench", q, "", 75)
						if err != nil || len(hits) == 0 {
							b.Fatal(len(hits), err)
						}
					}
				})
			}
		})
	}
}
