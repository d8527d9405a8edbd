//go:build unix

package index

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSnapshotLoad decodes a synthetic tenant's snapshot, in both
// versions: what a cold tenant's load costs past reading the file.
func BenchmarkSnapshotLoad(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		src := synthetic(n)
		for _, v := range []struct {
			name string
			file []byte
		}{{"v1", src.encodeV1()}, {"v2", src.encode()}} {
			b.Run(fmt.Sprintf("%s/%d", v.name, n), func(b *testing.B) {
				b.SetBytes(int64(len(v.file)))
				b.ReportAllocs()
				cpu := cpuTime(b)
				for b.Loop() {
					t := newTenant(0)
					if err := t.decode(v.file); err != nil {
						b.Fatal(err)
					}
				}
				// The machine is shared: CPU time, every goroutine's and
				// the collector's, moves less with its load than wall time.
				b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
