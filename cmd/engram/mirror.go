package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/journal"
	"github.com/engram-memory/engram/store"
)

// newMirror builds the file mirror of cfg on db.
func newMirror(cfg configs.Config, db *store.DB, logger *slog.Logger) *journal.Mirror {
	mc := cfg.Mirror
	return journal.New(db, db, db, journal.Config{Dir: cfg.MirrorDir(), MaxLogBytes: mc.MaxLogBytes,
		MaxFiles: mc.MaxFiles, MinFreeBytes: mc.MinFreeBytes}, holderName(), logger)
}

// registerMirrorMetrics exports the mirror's status on reg: how far it is
// behind the store, its failures and back-off (a full disk shows there),
// and the tenants past mirror.max_files.
func registerMirrorMetrics(reg prometheus.Registerer, m *journal.Mirror) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "engram_mirror_lag_events",
			Help: "Committed writes (change feed events) the file mirror has not applied yet, all tenants."},
			func() float64 { return float64(m.Status().Lag) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "engram_mirror_errors_total",
			Help: "File mirror steps that failed (a full disk, an I/O error) since the process started."},
			func() float64 { return float64(m.Status().Errors) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "engram_mirror_backoff_seconds",
			Help: "How long the file mirror waits before its next try after failures; 0 while it succeeds."},
			func() float64 { return m.Status().Backoff.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "engram_mirror_tenants_over_budget",
			Help: "Tenants past mirror.max_files, mirrored in log.jsonl only."},
			func() float64 { return float64(m.Status().OverBudget) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// mirrorVerbs are the sub-verbs of engram mirror.
var mirrorVerbs = group{name: "mirror", subs: []verb{
	{name: "mirror rebuild", summary: "Recreate the file mirror from the store (one JSON line per tenant; every tenant by default)."},
	{name: "mirror sync", summary: "Apply the writes the file mirror has not followed yet (after engram sleep or reflect ran\nwith no server up, say)."},
}}

// runMirror is `engram mirror rebuild [--tenant T]`, which recreates the
// file mirror from the store (one JSON line per tenant), and `engram
// mirror sync`, which applies the writes it has not followed yet (after
// engram sleep or reflect run with no server up, say). Both work whatever
// mirror.enabled says and beside a running server: a tenant's files are
// locked while they change.
func runMirror(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v, err := mirrorVerbs.dispatch(args, stdout)
	if err != nil {
		return err
	}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	var only *string
	if v.name == "mirror rebuild" {
		only = fs.String("tenant", "", "only this tenant (default: every tenant)")
	}
	positional, err := parse(fs, v, args[1:], stdout)
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
	mirror := newMirror(cfg, db, logger)
	if v.name == "mirror sync" {
		if err := mirror.Sync(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "applied the writes not yet mirrored (tenants another process is mirroring now are left to it): %s\n", cfg.MirrorDir())
		return nil
	}
	enc := json.NewEncoder(stdout)
	return mirror.RebuildAll(ctx, *only, func(r *journal.RebuildResult) error { return enc.Encode(r) })
}
