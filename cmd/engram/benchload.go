package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"

	"github.com/engram-memory/engram/bench"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/store"
)

// runLoad runs one load per entry of servers: that many engram servers,
// started as engram serve starts them (on free loopback ports), on one
// fresh database: a new SQLite file, or a fresh schema of the PostgreSQL
// that cfg names (the tables are dropped afterwards). analyze brings
// PostgreSQL's statistics up to date once the seed is stored
// (store.DB.AnalyzeTables): a fresh schema has none, which a serving
// database's autovacuum would have made, and its first minute is not
// what the load measures.
func runLoad(ctx context.Context, cfg configs.Config, keep string, servers []int, analyze bool, opt bench.LoadOptions, stdout io.Writer) error {
	var runs []bench.LoadResult
	for _, n := range servers {
		res, err := loadRun(ctx, cfg, keep, n, analyze, opt)
		if err != nil {
			return err
		}
		runs = append(runs, res)
	}
	bench.PrintLoad(stdout, cfg.Store.Driver, runs)
	return nil
}

func loadRun(ctx context.Context, cfg configs.Config, keep string, servers int, analyze bool, opt bench.LoadOptions) (bench.LoadResult, error) {
	cfg, done, err := benchServers(ctx, cfg, keep, "load")
	if err != nil {
		return bench.LoadResult{}, err
	}
	defer done()
	opt.Key = cfg.Auth.APIKey
	opt.URLs = nil
	for range servers {
		m := &Main{Config: cfg, Logger: NewLogger(cfg, os.Stderr)}
		if err := m.Start(ctx); err != nil {
			return bench.LoadResult{}, err
		}
		defer m.Close()
		opt.URLs = append(opt.URLs, m.URL())
		if analyze && opt.Ready == nil {
			opt.Ready = m.DB.AnalyzeTables
		}
	}
	return bench.RunLoad(ctx, opt)
}

// benchServers readies cfg for a benchmark's servers: a data directory
// (keep, or a temporary one), a fresh schema of the configured PostgreSQL
// (dropped by done), a random API key named after the benchmark, and a
// free loopback port each. done removes what it made.
func benchServers(ctx context.Context, cfg configs.Config, keep, name string) (configs.Config, func(), error) {
	var undo []func()
	done := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	cfg.DataDir = keep
	if cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "engram-"+name+"-")
		if err != nil {
			return cfg, done, err
		}
		undo = append(undo, func() { _ = os.RemoveAll(dir) })
		cfg.DataDir = dir
	}
	if cfg.Store.Driver == "postgres" {
		schema, drop, err := store.FreshSchema(ctx, cfg.Store.DSN, "engram_bench_")
		if err != nil {
			done()
			return cfg, func() {}, err
		}
		undo = append(undo, drop)
		cfg.Store.DSN = schema
	}
	key := make([]byte, 24)
	_, _ = rand.Read(key)
	cfg.Auth.APIKey = fmt.Sprintf("egk_%s%x", name, key)
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.Server.LogLevel = "warn"
	return cfg, done, nil
}
