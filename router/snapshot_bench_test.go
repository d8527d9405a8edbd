//go:build unix

package router_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/store/storetest"
)

// BenchmarkRouterLoad times a big tenant's routing model on a fresh
// service: built from the store (every live memory read and analysed,
// then its snapshot file written), then on another fresh service read
// from that file. It runs on the SQLite database that BenchmarkIngest
// kept in ENGRAM_BENCH_INGEST_DIR (its tenant "ingest"), and reports
// seconds and CPU seconds (every thread) of each:
//
//	ENGRAM_BENCH_INGEST_DIR=/tmp/i2m go test -tags sqlite_fts5 -run '^$' -bench RouterLoad -benchtime 1x ./router/
func BenchmarkRouterLoad(b *testing.B) {
	dir := os.Getenv("ENGRAM_BENCH_INGEST_DIR")
	if dir == "" {
		b.Skip("ENGRAM_BENCH_INGEST_DIR is not set")
	}
	o := storetest.Options(b, "sqlite")
	o.DataDir = dir
	db := storetest.OpenWith(b, o)
	ctx := storetest.Tenant(b, db, "ingest")
	snaps := b.TempDir()
	route := func() (time.Duration, time.Duration) {
		svc := router.NewService(router.New(router.DefaultConfig()), db, 0).WithSnapshots(snaps, nil)
		cpu0, t0 := cpuSeconds(b), time.Now()
		if _, err := svc.RouteQuery(ctx, "how is the migration going"); err != nil {
			b.Fatal(err)
		}
		wall, cpu := time.Since(t0), cpuSeconds(b)-cpu0
		svc.Close()
		return wall, cpu
	}
	for b.Loop() {
		storeWall, storeCPU := route()
		fileWall, fileCPU := route()
		b.ReportMetric(storeWall.Seconds(), "store-s")
		b.ReportMetric(storeCPU.Seconds(), "store-cpu-s")
		b.ReportMetric(fileWall.Seconds(), "file-s")
		b.ReportMetric(fileCPU.Seconds(), "file-cpu-s")
	}
}

func cpuSeconds(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
