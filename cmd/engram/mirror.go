package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engram-memory/engram"
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

// runMirror is `engram mirror rebuild [--tenant T]`, which recreates the
// file mirror from the store (one JSON line per tenant), and `engram
// mirror sync`, which applies the writes it has not followed yet (after
// engram sleep or reflect run with no server up, say). Both work whatever
// mirror.enabled says and beside a running server: a tenant's files are
// locked while they change.
func runMirror(ctx context.Context, args, environ []string, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "rebuild" && args[0] != "sync") {
		return engram.Errorf(engram.EINVALID, "usage: engram mirror rebuild [--tenant NAME] | engram mirror sync")
	}
	verb := args[0]
	fs := flag.NewFlagSet("mirror "+verb, flag.ContinueOnError)
	load := commonFlags(fs, false)
	var only *string
	if verb == "rebuild" {
		only = fs.String("tenant", "", "only this tenant (default: every tenant)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return engram.Errorf(engram.EINVALID, "mirror %s: unexpected argument %q", verb, fs.Arg(0))
	}
	cfg, err := load(environ)
	if err != nil {
		return err
	}
	logger := NewLogger(cfg, os.Stderr)
	db, err := Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	mirror := newMirror(cfg, db, logger)
	if verb == "sync" {
		if err := mirror.Sync(ctx); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "applied the writes not yet mirrored (tenants another process is mirroring now are left to it): %s\n", cfg.MirrorDir())
		return nil
	}
	enc := json.NewEncoder(stdout)
	return mirror.RebuildAll(ctx, *only, func(r *journal.RebuildResult) error { return enc.Encode(r) })
}
