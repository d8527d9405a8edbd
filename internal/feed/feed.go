// Package feed is the one follower of the store's change feed (DESIGN §2)
// that every background consumer uses — the embeddings, the file mirror:
// it leases a tenant whose feed has changes the consumer has not applied,
// hands them to the consumer, advances the tenant's cursor, and polls
// when there is nothing to do. The lease is short and renewed while the
// consumer works, and released when the follower stops, so a process that
// dies holds its tenants for seconds and one that stops holds them not at
// all. Failures back off exponentially, bounded, and the follower says
// how it is doing (Status) for metrics and /healthz.
package feed

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/engram-memory/engram"
)

const (
	// Lease is how long a claim on a tenant lasts unless renewed: after a
	// crash, another process takes the tenant up within this. The holder
	// renews it every third of it while the consumer works.
	Lease = 5 * time.Second
	// MaxBackoff bounds the wait after consecutive failures: the first
	// retry comes after one poll, each next one after twice as long, up to
	// this.
	MaxBackoff = time.Minute
	// finishTimeout bounds the statements that end a step or a run (the
	// cursor's advance, the leases' release) when the context that ran
	// them has ended: a stopping process still records its progress.
	finishTimeout = 5 * time.Second
)

// The states Status reports.
const (
	StateOK         = "ok"          // following: caught up, or catching up without failures
	StateBackingOff = "backing_off" // the last step failed; the next comes after Backoff
	StateStopped    = "stopped"     // Run returned
)

// ApplyFunc applies the changes of the tenant in ctx (tenantID) after
// sequence after, and returns the sequence it reached: the cursor moves
// there, even when it also returns an error. It may stop early (a time or
// page budget); the follower claims the tenant again while changes are left.
type ApplyFunc func(ctx context.Context, tenantID string, after int64) (int64, error)

// Config is what a Follower follows and for whom.
type Config struct {
	// Consumer names the cursor in the store ("mirror", "embeddings").
	Consumer string
	// Holder names this process in the leases it takes: unique per process.
	Holder  string
	Cursors engram.FeedCursors
	Apply   ApplyFunc
	Log     *slog.Logger
	// Lease overrides Lease when positive.
	Lease time.Duration
}

// Status is how a follower is doing, for metrics and /healthz.
type Status struct {
	State string `json:"state"`
	// Lag is how many committed changes of every tenant the consumer has
	// not applied, as last counted (once per poll at most).
	Lag int64 `json:"lag"`
	// Errors counts the failed steps since the process started.
	Errors int64 `json:"errors"`
	// LastError is the cause of the last failure, the innermost error
	// only ("no space left on device"): /healthz needs no key, so no path
	// or tenant shows there. The log has the whole error.
	LastError string     `json:"last_error,omitempty"`
	ErrorAt   *time.Time `json:"last_error_at,omitempty"`
	// Backoff is the wait before the next step after a failure, 0 while
	// steps succeed.
	Backoff time.Duration `json:"-"`
	// BackoffSeconds is Backoff, in seconds, for JSON.
	BackoffSeconds float64 `json:"backoff_seconds"`
}

// Follower follows the change feed for one consumer.
type Follower struct {
	cfg Config

	mu     sync.Mutex
	status Status
}

// New returns the follower of cfg.
func New(cfg Config) *Follower {
	if cfg.Lease <= 0 {
		cfg.Lease = Lease
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Follower{cfg: cfg, status: Status{State: StateOK}}
}

// Status returns a copy of the follower's status.
func (f *Follower) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.status
	s.BackoffSeconds = s.Backoff.Seconds()
	return s
}

// cause is the innermost error of err (the first of joined ones).
func cause(err error) error {
	for {
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			if errs := u.Unwrap(); len(errs) > 0 && errs[0] != nil {
				err = errs[0]
				continue
			}
		case interface{ Unwrap() error }:
			if next := u.Unwrap(); next != nil {
				err = next
				continue
			}
		}
		return err
	}
}

// errLeaseLost cancels a step whose lease another holder took.
var errLeaseLost = errors.New("feed: the lease ran out and another process took the tenant")

// Step claims one tenant with changes the consumer has not applied,
// applies them while renewing the lease, and advances the tenant's
// cursor to where the consumer got, which also ends the lease. It reports
// whether it found work; a failure is counted in Status.
func (f *Follower) Step(ctx context.Context) (bool, error) {
	worked, err := f.step(ctx)
	if err != nil && ctx.Err() == nil {
		now := time.Now().UTC()
		f.mu.Lock()
		f.status.Errors++
		f.status.LastError, f.status.ErrorAt = cause(err).Error(), &now
		f.mu.Unlock()
	}
	return worked, err
}

func (f *Follower) step(ctx context.Context) (bool, error) {
	c := f.cfg
	tenant, after, ok, err := c.Cursors.ClaimFeed(ctx, c.Consumer, c.Holder, c.Lease)
	if err != nil || !ok {
		return false, err
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	var renewer sync.WaitGroup
	renewer.Go(func() { f.renew(actx, cancel, tenant, stop) })
	seq, err := c.Apply(engram.NewContextWithTenant(actx, tenant), tenant, after)
	close(stop)
	renewer.Wait()
	if context.Cause(actx) == errLeaseLost && ctx.Err() == nil {
		err = errors.Join(errLeaseLost, err)
	}
	// Advancing to the position reached (the old one after a failure)
	// also ends the lease, so a failed tenant is retried at the next step,
	// and a stopping process (ctx ended) records how far it got.
	fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer fcancel()
	if aerr := c.Cursors.AdvanceFeed(fctx, c.Consumer, c.Holder, tenant, max(seq, after)); err == nil {
		err = aerr
	}
	return true, err
}

// renew extends the lease on tenant every third of it until stop closes;
// when the lease is lost it cancels the step.
func (f *Follower) renew(ctx context.Context, cancel context.CancelCauseFunc, tenant string, stop <-chan struct{}) {
	c := f.cfg
	t := time.NewTicker(c.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			ok, err := c.Cursors.RenewFeed(ctx, c.Consumer, c.Holder, tenant, c.Lease)
			if err != nil {
				c.Log.Warn("feed: renewing a lease failed", "consumer", c.Consumer, "tenant_id", tenant, "err", err)
				continue
			}
			if !ok {
				cancel(errLeaseLost)
				return
			}
		}
	}
}

// Run follows the feed until ctx ends: a step right after one that found
// work, one poll after one that found none, and after a failure a wait
// that doubles with each consecutive failure from one poll up to
// MaxBackoff. When ctx ends it releases the leases this process holds.
func (f *Follower) Run(ctx context.Context, poll time.Duration) {
	defer f.release(ctx)
	var failures int
	var counted time.Time
	for ctx.Err() == nil {
		worked, err := f.Step(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := time.Duration(0)
		switch {
		case err != nil:
			failures++
			wait = backoff(poll, failures)
			f.cfg.Log.Warn("feed: applying changes failed; backing off", "consumer", f.cfg.Consumer,
				"failures", failures, "retry_in", wait, "err", err)
		case !worked:
			failures = 0
			wait = poll
		default:
			failures = 0
		}
		f.setBackoff(wait, err != nil)
		if time.Since(counted) >= poll {
			counted = time.Now()
			f.countLag(ctx)
		}
		if wait == 0 {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// backoff is the wait after the n-th consecutive failure.
func backoff(poll time.Duration, n int) time.Duration {
	wait := max(poll, time.Millisecond)
	for i := 1; i < n && wait < MaxBackoff; i++ {
		wait *= 2
	}
	return min(wait, MaxBackoff)
}

func (f *Follower) setBackoff(wait time.Duration, failing bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if failing {
		f.status.State, f.status.Backoff = StateBackingOff, wait
		return
	}
	f.status.State, f.status.Backoff = StateOK, 0
}

// countLag updates Status.Lag; a failure leaves the last count.
func (f *Follower) countLag(ctx context.Context) {
	lag, err := f.cfg.Cursors.FeedLag(ctx, f.cfg.Consumer)
	if err != nil {
		f.cfg.Log.Debug("feed: counting the lag failed", "consumer", f.cfg.Consumer, "err", err)
		return
	}
	f.mu.Lock()
	f.status.Lag = lag
	f.mu.Unlock()
}

// release ends the leases this process holds, after ctx ended.
func (f *Follower) release(ctx context.Context) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := f.cfg.Cursors.ReleaseFeed(rctx, f.cfg.Consumer, f.cfg.Holder); err != nil {
		f.cfg.Log.Warn("feed: releasing the leases failed; they run out on their own", "consumer", f.cfg.Consumer, "err", err)
	}
	f.mu.Lock()
	f.status.State, f.status.Backoff = StateStopped, 0
	f.mu.Unlock()
}
