package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/internal/clearance"
	"github.com/engram-memory/engram/mcp"
	"github.com/engram-memory/engram/store"
)

// NewMCP builds the MCP tools on the services: the same tools for
// `engram mcp` (stdio) and for /mcp on the HTTP server.
func NewMCP(cfg configs.Config, db *store.DB, s *Services, logger *slog.Logger) *mcp.Server {
	return mcp.New(mcp.Config{
		Memories: s.Memories, Aliases: clearance.Aliases{AliasService: db, Memories: db}, Recall: s.Recall, Feedback: clearance.Feedback{FeedbackService: s.Feedback, Memories: db, Levels: db.MemoryLevels}, Reflections: reflector{s.Reflections, reflectionStore{db}.FindReflectionByID}, Jobs: jobReader{s.Jobs, reflectionStore{db}.FindReflectionByID}, Auth: db, Health: db,
		Sessions: s.Working, Prompt: s.Working,
		Categories: cfg.Memory.Categories, Gate: cfg.Memory.Gate == "on", GateMode: cfg.Memory.GateMode,
		Limits: mcp.Limits{MaxArgumentBytes: cfg.Limits.MaxBodyBytes, MaxJSONDepth: cfg.Limits.MaxJSONDepth, MaxBatch: cfg.Limits.MaxBatch,
			MaxBudget: cfg.Recall.MaxBudget, Keys: cfg.Limits.KeyLimits()},
		Version: moduleVersion(), Logger: logger,
	})
}

// runMCP is `engram mcp`: the MCP tools over stdin and stdout, for an MCP
// client that starts engram as its subprocess. Logs go to stderr; stdout
// carries the protocol only. It serves until the client closes stdin or
// the process is told to stop.
func runMCP(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "mcp", summary: "Serve the MCP tools over stdin and stdout, for an MCP client that starts engram\n(tenant: that of ENGRAM_API_KEY, else auth.default_tenant). Logs go to stderr."}
	fs := newFlags(v)
	load := commonFlags(fs, false)
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
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	db, err := Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.Close()
	id, err := stdioIdentity(ctx, cfg, db)
	if err != nil {
		return err
	}
	services, err := NewServices(cfg, db, logger)
	if err != nil {
		return err
	}
	// The embeddings and the file mirror follow the change feed here too:
	// with no server running, this process is the only one that writes.
	var background sync.WaitGroup
	bg, stop := context.WithCancel(context.Background())
	defer func() { stop(); background.Wait() }()
	if services.Embeddings != nil {
		background.Go(func() { services.Embeddings.Run(bg, cfg.Embeddings.Poll) })
	}
	if services.Mirror != nil {
		background.Go(func() { services.Mirror.Run(bg, cfg.Mirror.Poll) })
	}
	background.Go(func() { services.Jobs.Run(bg) }) // a large tenant's reflect
	logger.Info("engram mcp started", "transport", "stdio", "tenant_id", id.TenantID, "driver", cfg.Store.Driver, "data_dir", cfg.DataDir)
	err = NewMCP(cfg, db, services, logger).RunStdio(ctx, id, os.Stdin, nopWriteCloser{stdout})
	reason := "stdin closed"
	if ctx.Err() != nil {
		reason = "signal"
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		err = nil
	}
	logger.Info("engram mcp stopped", "reason", reason)
	return err
}

// stdioIdentity is whom `engram mcp` acts for. With auth.api_key
// (ENGRAM_API_KEY) set, the tenant of that key: a key the store does not
// know yet is imported as the default tenant's, exactly as serve does on
// start, so one environment serves both verbs whichever starts first; a
// revoked key is refused. Without a key, the default tenant
// (auth.default_tenant): whoever can start engram on this data can read it
// anyway.
func stdioIdentity(ctx context.Context, cfg configs.Config, db *store.DB) (mcp.Identity, error) {
	if err := engram.CheckUserID(cfg.Auth.UserID); err != nil {
		return mcp.Identity{}, fmt.Errorf("auth.user_id (ENGRAM_USER_ID): %w", err)
	}
	tenant := cfg.Auth.DefaultTenant
	secret := cfg.Auth.APIKey
	if secret == "" {
		t, err := db.EnsureTenant(ctx, tenant)
		if err != nil {
			return mcp.Identity{}, err
		}
		return mcp.Identity{TenantID: t.ID, UserID: cfg.Auth.UserID}, nil
	}
	key, err := db.Authenticate(ctx, secret)
	if engram.ErrorCode(err) == engram.EUNAUTHORIZED {
		if _, err = db.EnsureTenant(ctx, tenant); err == nil {
			if _, err = db.ImportAPIKey(ctx, tenant, "configured", secret); err == nil {
				key, err = db.Authenticate(ctx, secret)
			}
		}
	}
	if err != nil {
		return mcp.Identity{}, err
	}
	return mcp.Identity{TenantID: key.TenantID, KeyID: key.ID, Reader: mcp.ReaderOf(key), UserID: cfg.Auth.UserID}, nil
}

// nopWriteCloser lets the protocol close stdout's writer without closing
// the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
