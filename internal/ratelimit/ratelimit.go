// Package ratelimit slows the guessing of secrets: it remembers, per
// client address, a bucket of failures (failed sign-ins, bad bearer keys).
// Each address may fail Burst times; then it is refused until the bucket
// refills, at one try every Refill. Successes take nothing from the
// bucket. The server and the console share one Limiter, so guessing
// through one door counts at the others too.
//
// Memory is bounded: at most MaxClients addresses are remembered, the
// least recently failing forgotten first (a forgotten address starts
// again with a full bucket). IPv6 addresses count per /64, the block one
// client usually holds, so that stepping through its addresses buys no
// tries.
//
// The limiter is per process, a deliberate exception to engram's rule
// that learned state lives in the store: it is a brake, not a record, and
// several servers behind a balancer multiply the allowed rate by their
// number at most, which keeps guessing a 256-bit key hopeless.
package ratelimit

import (
	"container/list"
	"net/netip"
	"sync"
	"time"
)

// Limiter counts failures per client address. A nil *Limiter allows
// everything.
type Limiter struct {
	burst      float64
	refill     time.Duration
	maxClients int
	now        func() time.Time

	mu      sync.Mutex
	clients map[string]*list.Element // of *bucket, most recently failing first
	order   *list.List
}

type bucket struct {
	addr   string
	tokens float64
	at     time.Time
}

// New returns a Limiter allowing burst failures per address, one more
// every refill, remembering at most maxClients addresses. now is the
// clock (nil: time.Now).
func New(burst int, refill time.Duration, maxClients int, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{burst: float64(max(burst, 1)), refill: max(refill, time.Nanosecond), maxClients: max(maxClients, 1),
		now: now, clients: map[string]*list.Element{}, order: list.New()}
}

// Key is the address a client counts under: an IP as is, an IPv6
// address as its /64, anything unparsable as given.
func Key(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// fill returns b's tokens at now.
func (l *Limiter) fill(b *bucket, now time.Time) float64 {
	return min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.refill))
}

// Wait returns 0 when addr may try, else how long until it may try
// again. It changes nothing: a refused request is not a failure.
func (l *Limiter) Wait(addr string) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.clients[Key(addr)]
	if !ok {
		return 0
	}
	b := e.Value.(*bucket)
	tokens := l.fill(b, l.now())
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) * float64(l.refill))
}

// Fail records a failure from addr.
func (l *Limiter) Fail(addr string) {
	if l == nil {
		return
	}
	key, now := Key(addr), l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.clients[key]
	if !ok {
		e = l.order.PushFront(&bucket{addr: key, tokens: l.burst, at: now})
		l.clients[key] = e
		for l.order.Len() > l.maxClients {
			old := l.order.Back()
			l.order.Remove(old)
			delete(l.clients, old.Value.(*bucket).addr)
		}
	}
	l.order.MoveToFront(e)
	b := e.Value.(*bucket)
	b.tokens, b.at = max(l.fill(b, now)-1, 0), now
}

// Len returns how many addresses are remembered.
func (l *Limiter) Len() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}

// RetryAfter renders a wait as a Retry-After value: whole seconds,
// rounded up, at least 1.
func RetryAfter(wait time.Duration) int {
	return max(int((wait+time.Second-1)/time.Second), 1)
}
