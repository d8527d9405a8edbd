package bench

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD, which package syscall does not
// name: the calling thread's usage alone.
const rusageThread = 1

// threadCPU returns the CPU time the calling thread has used, user and
// system, and true; the caller locks its goroutine to the thread. Time
// the thread waited for a core (other processes, the collector, the
// recall writer) is not in it, so next to the wall time of a recall it
// tells work from waiting.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
