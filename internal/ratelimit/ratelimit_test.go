package ratelimit

import (
	"testing"
	"time"
)

// TestLimiter: an address may fail burst times, then waits for the
// bucket to refill one try per refill; other addresses are unaffected;
// IPv6 addresses of one /64 share a bucket; at most maxClients
// addresses are remembered, the least recently failing forgotten first.
func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(3, 10*time.Second, 2, func() time.Time { return now })
	for i := range 3 {
		if w := l.Wait("192.0.2.1"); w != 0 {
			t.Fatalf("failure %d: wait %v", i, w)
		}
		l.Fail("192.0.2.1")
	}
	if w := l.Wait("192.0.2.1"); w != 10*time.Second {
		t.Fatalf("after the burst: wait %v, want 10s", w)
	}
	if w := l.Wait("192.0.2.2"); w != 0 {
		t.Errorf("another address waits %v", w)
	}
	now = now.Add(4 * time.Second)
	if w := l.Wait("192.0.2.1"); w != 6*time.Second || RetryAfter(w) != 6 {
		t.Errorf("4 s later: wait %v", w)
	}
	now = now.Add(6 * time.Second)
	if w := l.Wait("192.0.2.1"); w != 0 {
		t.Errorf("after a refill: wait %v", w)
	}
	l.Fail("192.0.2.1")
	if w := l.Wait("192.0.2.1"); w != 10*time.Second {
		t.Errorf("one refilled try used: wait %v", w)
	}

	for range 3 {
		l.Fail("2001:db8::1")
	}
	if w := l.Wait("2001:db8::ffff"); w == 0 {
		t.Error("another address of the same /64 is not slowed")
	}
	if w := l.Wait("2001:db8:0:1::1"); w != 0 {
		t.Errorf("another /64 waits %v", w)
	}
	l.Fail("192.0.2.3")
	if l.Len() != 2 {
		t.Errorf("%d addresses remembered, want at most 2", l.Len())
	}
	if w := l.Wait("192.0.2.1"); w != 0 {
		t.Errorf("the least recently failing address was not forgotten: wait %v", w)
	}

	var none *Limiter
	none.Fail("192.0.2.1")
	if none.Wait("192.0.2.1") != 0 || RetryAfter(time.Millisecond) != 1 {
		t.Error("a nil limiter slows, or Retry-After rounds down")
	}
}
