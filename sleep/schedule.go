package sleep

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-memory/engram"
)

// Report receives the outcome of one tenant's sleep.
type Report func(tenant *engram.Tenant, r *engram.SleepResult, err error)

// SleepAll runs one cycle for every tenant, by name, or for only the named
// one, calling report after each; an error of one tenant does not stop the
// others. ENOTFOUND when only names no tenant.
func (s *Sleeper) SleepAll(ctx context.Context, only string, report Report) error {
	tenants, err := s.store.FindTenants(ctx)
	if err != nil {
		return fmt.Errorf("sleep: list tenants: %w", err)
	}
	found := only == ""
	for _, t := range tenants {
		if only != "" && t.Name != only {
			continue
		}
		found = true
		actx := engram.NewContextWithActor(engram.NewContextWithTenant(ctx, t.ID), engram.Actor{KeyID: "sleep"})
		r, err := s.Sleep(actx)
		report(t, r, err)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if !found {
		return engram.Errorf(engram.ENOTFOUND, "tenant %q not found", only)
	}
	return nil
}

// Run sleeps every tenant each interval until ctx ends, the first time one
// interval after the start. A failed round is reported through failed
// (nil: ignored) and the next round is tried as usual.
func (s *Sleeper) Run(ctx context.Context, every time.Duration, report Report, failed func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.SleepAll(ctx, "", report); err != nil && ctx.Err() == nil && failed != nil {
			failed(err)
		}
	}
}
