package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/bench"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/store"
)

// runUsers runs engram bench users on a fresh database: a new SQLite
// file, or a fresh schema of the PostgreSQL that cfg names (dropped
// afterwards). The data is seeded through store.SeedMemories (bulk
// inserts, no change feed), then servers started as engram serve starts
// them are measured over HTTP.
func runUsers(ctx context.Context, cfg configs.Config, keep string, opt bench.UsersOptions, stdout io.Writer) error {
	cfg, done, err := benchServers(ctx, cfg, keep, "users")
	if err != nil {
		return err
	}
	defer done()
	logger := NewLogger(cfg, os.Stderr)
	db, err := Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	h := &usersHost{cfg: cfg, db: db, logger: logger, ids: map[string]string{}}
	res, err := bench.RunUsers(ctx, h, opt, os.Stderr)
	if err != nil {
		return err
	}
	bench.PrintUsers(stdout, cfg.Store.Driver, res)
	return nil
}

// usersHost seeds the database of engram bench users and starts and
// stops its servers.
type usersHost struct {
	cfg    configs.Config
	db     *store.DB
	logger *slog.Logger
	ids    map[string]string // tenant name → id
	main   *Main
}

func (h *usersHost) tenant(ctx context.Context, name string) (context.Context, error) {
	id, ok := h.ids[name]
	if !ok {
		t, err := h.db.EnsureTenant(ctx, name)
		if err != nil {
			return nil, err
		}
		id = t.ID
		h.ids[name] = id
	}
	return engram.NewContextWithTenant(ctx, id), nil
}

func (h *usersHost) Seed(ctx context.Context, tenant string, ms []*engram.Memory) error {
	tctx, err := h.tenant(ctx, tenant)
	if err != nil {
		return err
	}
	return h.db.SeedMemories(tctx, ms)
}

func (h *usersHost) Key(ctx context.Context, tenant string) (string, error) {
	if _, err := h.tenant(ctx, tenant); err != nil {
		return "", err
	}
	_, secret, err := h.db.CreateAPIKey(ctx, tenant, "bench")
	return secret, err
}

func (h *usersHost) Start(ctx context.Context) (string, error) {
	if h.main != nil {
		return "", errors.New("bench users: a server is running")
	}
	m := &Main{Config: h.cfg, Logger: h.logger}
	if err := m.Start(ctx); err != nil {
		return "", err
	}
	h.main = m
	return m.URL(), nil
}

func (h *usersHost) Snapshot(ctx context.Context, tenant string) error {
	tctx, err := h.tenant(ctx, tenant)
	if err != nil {
		return err
	}
	if h.main == nil {
		return errors.New("bench users: no server running")
	}
	return h.main.index.Snapshot(tctx)
}

func (h *usersHost) Warm(ctx context.Context) error {
	if h.main == nil {
		return errors.New("bench users: no server running")
	}
	select {
	case <-h.main.Warmed():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *usersHost) Stop() error {
	if h.main == nil {
		return nil
	}
	err := h.main.Close()
	h.main = nil
	return err
}
