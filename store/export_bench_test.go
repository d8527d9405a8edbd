package store_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// BenchmarkEachPair streams every pair of a tenant holding n pairs and
// reports pairs/s and the peak heap in use while streaming, which must
// not grow with n.
func BenchmarkEachPair(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			db := storetest.Open(b, "sqlite")
			ctx := storetest.Tenant(b, db, "bench")
			if err := store.InsertSyntheticPairs(ctx, db, n); err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			var peak atomic.Uint64
			stop := make(chan struct{})
			go func() {
				var ms runtime.MemStats
				for {
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > peak.Load() {
						peak.Store(ms.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				got := 0
				if _, err := db.EachPair(ctx, engram.PairFilter{}, func(*engram.Pair) error { got++; return nil }); err != nil {
					b.Fatal(err)
				}
				if got != n {
					b.Fatalf("streamed %d of %d", got, n)
				}
			}
			close(stop)
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "pairs/s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
		})
	}
}
