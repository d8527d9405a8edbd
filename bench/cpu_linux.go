package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time the calling thread has used and true;
// the caller locks its goroutine to the thread. Time the thread waited
// for a core (other processes, the collector, the recall writer) is not
// in it, so next to the wall time of a recall it tells work from waiting.
// The thread's clock counts the running slice to the nanosecond, where
// getrusage lags by up to a scheduler tick.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
