package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/sleep"
)

// sleepMetrics count the sleep cycle's runs and changes on /metrics.
type sleepMetrics struct {
	runs    prometheus.Counter
	changes *prometheus.CounterVec
}

func newSleepMetrics(reg prometheus.Registerer) (*sleepMetrics, error) {
	m := &sleepMetrics{
		runs: prometheus.NewCounter(prometheus.CounterOpts{Name: "engram_sleep_runs_total",
			Help: "Sleep cycles run, one per tenant."}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "engram_sleep_changes_total",
			Help: "What sleep cycles changed, by kind."}, []string{"kind"}),
	}
	for _, c := range []prometheus.Collector{m.runs, m.changes} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *sleepMetrics) add(r *engram.SleepResult) {
	m.runs.Inc()
	for kind, n := range map[string]float64{"merged": float64(r.Merged), "archived": float64(r.Archived),
		"expired": float64(r.Expired), "events_folded": float64(r.EventsFolded), "linked": float64(r.Linked),
		"reflections_written": float64(len(r.Reflect.Written))} {
		m.changes.WithLabelValues(kind).Add(n)
	}
}

// sleepEvery runs the sleep cycle over every tenant each interval until
// ctx ends, logging and counting what it did.
func (m *Main) sleepEvery(ctx context.Context, every time.Duration, sleeper *sleep.Sleeper, metrics *sleepMetrics) {
	sleeper.Run(ctx, every, func(tenant *engram.Tenant, r *engram.SleepResult, err error) {
		if err != nil {
			m.Logger.Warn("sleep failed", "tenant", tenant.Name, "err", err)
			return
		}
		metrics.add(r)
		m.Logger.Info("sleep", "tenant", tenant.Name, "merged", r.Merged, "archived", r.Archived, "expired", r.Expired,
			"linked", r.Linked, "events_folded", r.EventsFolded, "reflections_written", len(r.Reflect.Written), "conflicts", r.Conflicts)
	}, func(err error) { m.Logger.Warn("sleep cycle failed", "err", err) })
}

// runSleep is `engram sleep`: one cycle for every tenant, or --tenant's,
// printing each tenant's result as a JSON line.
func runSleep(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "sleep", summary: "One sleep cycle — merge duplicates, archive, expire, compact the event log, re-reflect —\nfor every tenant (or --tenant's), printing each tenant's result as a JSON line."}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	tenant := fs.String("tenant", "", "only this tenant (default: every tenant)")
	positional, err := parse(fs, v, args, stdout)
	if err != nil {
		return err
	}
	if err := noArgs(v, positional); err != nil {
		return err
	}
	cfg, err := load(environ)
	if err != nil {
		return err
	}
	logger := NewLogger(cfg, os.Stderr)
	db, err := openExisting(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	services, err := NewServices(cfg, db, logger)
	if err != nil {
		return err
	}
	var failed error
	enc := json.NewEncoder(stdout)
	bar := newProgressBar(os.Stderr, "sleep: re-reflect")
	err = services.Sleep.SleepAll(bar.context(ctx), *tenant, func(t *engram.Tenant, r *engram.SleepResult, err error) {
		bar.finish()
		if err != nil {
			failed = errors.Join(failed, fmt.Errorf("tenant %s: %w", t.Name, err))
			return
		}
		_ = enc.Encode(struct {
			Tenant string `json:"tenant"`
			*engram.SleepResult
		}{t.Name, r})
	})
	return errors.Join(err, failed)
}

// runReflect is `engram reflect`: the reflector for one tenant (default:
// auth.default_tenant), optionally one category, printing the result.
// It runs in this process, on the store, whatever the tenant's size (no
// request waits on it), drawing its progress on stderr.
func runReflect(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "reflect", summary: "Write the L3 reflections of a tenant's groups that changed (default tenant: auth.default_tenant)."}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	tenant := fs.String("tenant", "", "tenant name (default: auth.default_tenant)")
	category := fs.String("category", "", "only this category")
	positional, err := parse(fs, v, args, stdout)
	if err != nil {
		return err
	}
	if err := noArgs(v, positional); err != nil {
		return err
	}
	cfg, err := load(environ)
	if err != nil {
		return err
	}
	if *tenant == "" {
		*tenant = cfg.Auth.DefaultTenant
	}
	logger := NewLogger(cfg, os.Stderr)
	db, err := openExisting(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	services, err := NewServices(cfg, db, logger)
	if err != nil {
		return err
	}
	t, err := db.FindTenant(ctx, *tenant)
	if err != nil {
		return err
	}
	bar := newProgressBar(os.Stderr, "reflect "+t.Name)
	res, err := services.Reflections.Reflect(bar.context(engram.NewContextWithTenant(ctx, t.ID)), engram.ReflectRequest{Category: *category})
	bar.finish()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}
