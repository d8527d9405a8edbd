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
	cfg.DataDir = keep
	if cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "engram-load-")
		if err != nil {
			return bench.LoadResult{}, err
		}
		defer os.RemoveAll(dir)
		cfg.DataDir = dir
	}
	if cfg.Store.Driver == "postgres" {
		schema, drop, err := store.FreshSchema(ctx, cfg.Store.DSN, "engram_bench_")
		if err != nil {
			return bench.LoadResult{}, err
		}
		defer drop()
		cfg.Store.DSN = schema
	}
	key := make([]byte, 24)
	_, _ = rand.Read(key)
	cfg.Auth.APIKey = fmt.Sprintf("egk_load%x", key)
	cfg.Server.Addr = "127.0.0.1:0"
	cfg.Server.LogLevel = "warn"
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
