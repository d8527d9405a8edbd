package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/internal/clearance"
	"github.com/engram-memory/engram/internal/ratelimit"
	"github.com/engram-memory/engram/jobs"
	"github.com/engram-memory/engram/journal"
	"github.com/engram-memory/engram/learning"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/server"
	"github.com/engram-memory/engram/sleep"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/tokens"
	"github.com/engram-memory/engram/users"
	"github.com/engram-memory/engram/web"
	"github.com/engram-memory/engram/working"
)

// Main is one engram process: configuration, store and HTTP server (the
// REST API and MCP at /mcp).
// Tests boot it on :0 exactly as the binary does.
type Main struct {
	Config  configs.Config
	DB      *store.DB
	Logger  *slog.Logger
	KeyFile string // where a generated default key was saved, if any

	ln         net.Listener
	http       *http.Server
	done       chan error
	background sync.WaitGroup     // feed followers
	stop       context.CancelFunc // ends them
	index      *index.Index       // its snapshot writers finish before exit
	router     *router.Service    // so do the router's
	warmed     chan struct{}      // closed when the preload of big tenants ends
}

// commonFlags registers --config and --data (and --addr for serve) and
// returns a loader that layers defaults, file, environment and flags.
func commonFlags(fs *flag.FlagSet, withAddr bool) func(environ []string) (configs.Config, error) {
	configPath := fs.String("config", "", "YAML config file (see configs/engram.yaml)")
	data := fs.String("data", "", "data directory (overrides data_dir)")
	var addr *string
	if withAddr {
		addr = fs.String("addr", "", "listen address host:port (overrides server.addr)")
	}
	return func(environ []string) (configs.Config, error) {
		cfg, err := configs.Load(*configPath, environ)
		if err != nil {
			return cfg, err
		}
		if *data != "" {
			cfg.DataDir = *data
		}
		if addr != nil && *addr != "" {
			cfg.Server.Addr = *addr
		}
		return cfg, cfg.Validate()
	}
}

// Open loads nothing itself: it opens the store described by cfg.
func Open(ctx context.Context, cfg configs.Config, logger *slog.Logger) (*store.DB, error) {
	tok, err := tokens.New(cfg.Tokens.Encoding)
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, store.Options{
		Driver: cfg.Store.Driver, DSN: cfg.Store.DSN, DataDir: cfg.DataDir, MaxOpenConns: cfg.Store.MaxOpenConns,
		BusyTimeout: cfg.Store.BusyTimeout, Logger: logger, Tokens: tok, Rules: cfg.Rules(),
		MaxSessionEvents: cfg.Sessions.MaxEvents,
		Quotas:           store.Quotas{Memories: cfg.Quotas.MaxMemories, Bytes: cfg.Quotas.MaxBytes, Sessions: cfg.Quotas.MaxSessions},
		VectorCacheBytes: vectorCacheBytes(cfg.Embeddings.CacheMB), VectorCacheTTL: cfg.Embeddings.Poll,
	})
}

// vectorCacheBytes is embeddings.cache_mb in bytes, 0 turning the cache
// off (store.Options.VectorCacheBytes takes a negative size for that).
func vectorCacheBytes(mb int) int64 {
	if mb == 0 {
		return -1
	}
	return int64(mb) << 20
}

// Services are the domain services built on one store.
type Services struct {
	Memories engram.MemoryService
	Router   *router.Service
	Recall   *learning.Recaller
	// Index answers recall's lexical search (a cache of the change feed).
	Index    *index.Index
	Feedback *learning.Feedback
	// Embeddings follows the change feed when an embeddings endpoint is
	// configured; nil otherwise. Main runs it in the background.
	Embeddings  *learning.Embeddings
	Reflections *reflections.Service
	Sleep       *sleep.Sleeper
	// Jobs runs a large tenant's reflect and sleep off the request path.
	Jobs *jobs.Service
	// Working is L1 working memory, personas and /v1/prompt.
	Working *working.Service
	// Mirror follows the change feed into the file mirror when
	// mirror.enabled says so; nil otherwise. Main runs it in the background.
	Mirror *journal.Mirror
	// Scorer explains score factors in the console.
	Scorer *learning.Scorer
	// Users forgets end users (DELETE /v1/users/{id}).
	Users *users.Service
}

// NewServices wires the router, the recall pipeline and, when
// configured, the embeddings onto db.
func NewServices(cfg configs.Config, db *store.DB, logger *slog.Logger) (*Services, error) {
	tok, err := tokens.New(cfg.Tokens.Encoding)
	if err != nil {
		return nil, err
	}
	scoring := learning.NewScoreConfig(cfg.Scoring)
	if err := scoring.Validate(); err != nil {
		return nil, fmt.Errorf("config: scoring: %w", err)
	}
	rcfg := router.DefaultConfig()
	rcfg.Categories = cfg.Memory.Categories
	loads := newSharedLoad(db)
	routes := router.NewService(router.New(rcfg), loads, cfg.Router.MaxTenants).
		WithSnapshots(filepath.Join(cfg.DataDir, "index"), logger)
	scorer := learning.NewScorer(scoring, time.Now)
	lexical := index.New(loads, index.Config{MaxBytes: cfg.Index.MaxMB << 20, RowCache: cfg.Index.RowCache,
		Dir: filepath.Join(cfg.DataDir, "index"), Logger: logger})
	recall := learning.NewRecaller(recallStore{db, lexical}, routes, scorer, tok,
		cfg.Recall, time.Now).WithExplore(cfg.Learning.Explore).WithKindProbes(cfg.Learning.ExploreKinds).WithLinks(clearance.Links{LinkService: db, Memories: db})
	services := &Services{Memories: clearance.NewLinkedMemories(db, db), Router: routes, Recall: recall, Index: lexical, Feedback: learning.NewFeedback(db, scorer, cfg.Feedback),
		Scorer: scorer}
	rc := reflections.Config{Categories: cfg.Memory.Categories, MinGroup: cfg.Reflector.MinGroup,
		Dir: filepath.Join(cfg.DataDir, "reflections")}
	if r := cfg.Reflector; r.BaseURL != "" {
		rc.Chat = reflections.NewChat(r.BaseURL, r.Model, r.APIKey, r.Timeout)
	}
	services.Reflections = reflections.New(reflectionStore{db}, rc, logger)
	services.Sleep = sleep.New(db, reflector{services.Reflections, reflectionStore{db}.FindReflectionByID}, sleep.Config{
		MergeSimilarity: cfg.Sleep.MergeSimilarity, ArchiveBelow: cfg.Sleep.ArchiveBelow,
		CompactAfter: cfg.Sleep.CompactAfter, Scoring: cfg.Scoring}, time.Now)
	services.Jobs = jobs.New(db, reflector{services.Reflections, reflectionStore{db}.FindReflectionByID}, services.Sleep, jobs.Config{Holder: holderName(),
		InlineMaxMemories: cfg.Jobs.InlineMaxMemories, Lease: cfg.Jobs.Lease, Poll: cfg.Jobs.Poll,
		MaxAttempts: cfg.Jobs.MaxAttempts, Categories: cfg.Memory.Categories}, logger.With("component", "jobs"))
	services.Working = working.New(db, services.Memories, routes, recall, tok, working.Config{Sessions: cfg.Sessions, Limits: cfg.Limits,
		Categories: cfg.Memory.Categories, MaxBudget: cfg.Recall.MaxBudget}, time.Now, logger)
	if e := cfg.Embeddings; e.BaseURL != "" {
		embedder := learning.NewOpenAIEmbedder(e.BaseURL, e.Model, e.APIKey, e.Dimensions, e.Timeout)
		recall.WithDense(embedder, denseStore{db}, learning.DenseConfig{Timeout: e.Timeout, Weight: e.Weight, AgreeFloor: e.AgreeFloor})
		services.Embeddings = learning.NewEmbeddings(embedder, db, db, db, holderName(), logger)
	}
	if cfg.MirrorOn() {
		services.Mirror = newMirror(cfg, db, logger)
	}
	uc := users.Config{Index: lexical, Router: routes, Reflections: services.Reflections, ReflectionsDir: rc.Dir}
	if services.Mirror != nil {
		uc.Mirror, uc.MirrorDir = mirrorRebuilder{services.Mirror}, cfg.MirrorDir()
	}
	services.Users = users.New(db, uc, logger)
	return services, nil
}

// NewServer builds the HTTP API (with MCP at /mcp and the console at
// /console/) on the services.
func NewServer(cfg configs.Config, db *store.DB, services *Services, registry *prometheus.Registry, logger *slog.Logger) (*server.Server, error) {
	failures := ratelimit.New(cfg.Auth.FailureBurst, cfg.Auth.FailureRefill, cfg.Auth.FailureClients, nil)
	console, err := NewConsole(cfg, db, services, failures, logger)
	if err != nil {
		return nil, err
	}
	var details map[string]func() any
	if services.Mirror != nil {
		details = map[string]func() any{"mirror": func() any { return services.Mirror.Status() }}
	}
	return server.New(server.Config{
		Memories: services.Memories, Auth: db, Health: db, Router: services.Router, Recall: services.Recall,
		Feedback: clearance.Feedback{FeedbackService: services.Feedback, Memories: db, Levels: db.MemoryLevels}, Reflections: reflector{services.Reflections, reflectionStore{db}.FindReflectionByID}, Jobs: jobReader{services.Jobs, reflectionStore{db}.FindReflectionByID}, Export: exporter, Users: services.Users, Aliases: clearance.Aliases{AliasService: db, Memories: db},
		Sessions: services.Working, Personas: services.Working, Prompt: services.Working,
		MCP: NewMCP(cfg, db, services, logger).Handler(), Console: console,
		Logger: logger, TrustedProxies: cfg.Server.TrustedProxies,
		Registry: registry, Quotas: db, Failures: failures, HealthDetails: details,
		AdminKey: cfg.Auth.AdminKey, Admin: db, Transfer: db, Gate: cfg.Memory.Gate == "on", GateMode: cfg.Memory.GateMode,
		AsyncFeedback: cfg.Feedback.Async,
		Limits: server.Limits{
			MaxBodyBytes: cfg.Limits.MaxBodyBytes, MaxImportBytes: cfg.Limits.MaxImportBytes, MaxJSONDepth: cfg.Limits.MaxJSONDepth,
			MaxBatch: cfg.Limits.MaxBatch, Keys: cfg.Limits.KeyLimits(), MaxBudget: cfg.Recall.MaxBudget,
		},
	})
}

// recallStore is the store as recall sees it, with lexical search answered
// by the in-memory index that follows the store's change feed.
type recallStore struct {
	*store.DB
	lexical *index.Index
}

// SearchMemories answers from the index, as the reader may see it
// (clearance.See, as every memory recall reads: see clearance.go).
func (s recallStore) SearchMemories(ctx context.Context, q engram.LexicalQuery) ([]engram.LexicalHit, error) {
	hits, err := s.lexical.SearchMemories(ctx, q)
	return clearance.SeeHits(ctx, hits), err
}

// holderName names this process in the feed leases it takes: host, pid
// and a random suffix, unique per server.
func holderName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%x", host, os.Getpid(), b)
}

// exporter adapts the export formats of learning to the server, which
// streams GET /v1/pairs page by page.
func exporter(w io.Writer, format string) (server.PairEncoder, bool, error) {
	f, err := learning.ParseFormat(format)
	if err != nil {
		return nil, false, err
	}
	return learning.NewEncoder(w, f), f.Paired(), nil
}

// NewConsole builds the web console on the services; the admin tenant,
// whose keys may switch tenants, is the default tenant.
func NewConsole(cfg configs.Config, db *store.DB, services *Services, failures *ratelimit.Limiter, logger *slog.Logger) (*web.Console, error) {
	return web.New(web.Config{
		Auth: db, Sessions: db, Tenants: db, Insights: db,
		Memories: services.Memories, Reflections: services.Reflections, Recall: services.Recall,
		Pairs: services.Feedback, Scorer: services.Scorer, Markdown: reflections.RenderHTML,
		LiveSessions: db, Working: services.Working, Impacts: services.Feedback, Raters: db, Links: clearance.Links{LinkService: db, Memories: db}, Aliases: db,
		Jobs: services.Jobs,
		Export: func(ctx context.Context, w io.Writer, format string, limit int) (int, error) {
			f, err := learning.ParseFormat(format)
			if err != nil {
				return 0, err
			}
			return learning.Export(ctx, services.Feedback, w, f, engram.PairFilter{Limit: limit})
		},
		Categories: cfg.Memory.Categories, AdminTenant: cfg.Auth.DefaultTenant, MaxBudget: cfg.Recall.MaxBudget,
		Failures: failures, Logger: logger.With("component", "console"),
	})
}

// NewLogger builds the process logger from the server settings.
func NewLogger(c configs.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Server.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if c.Server.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func runServe(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "serve", summary: "Serve the HTTP API (/v1, /openapi.json), /mcp and the console at /console/. The first start\ncreates the database and, unless ENGRAM_API_KEY is set, the default tenant's key (<data>/api_key)."}
	fs := newFlags(v)
	load := commonFlags(fs, true)
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
	m := &Main{Config: cfg, Logger: NewLogger(cfg, os.Stderr)}
	if err := m.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "engram listening on %s\n", m.URL())
	if m.KeyFile != "" {
		fmt.Fprintf(stdout, "API key of tenant %q: %s (mode 0600)\n", cfg.Auth.DefaultTenant, m.KeyFile)
	}
	select {
	case <-ctx.Done():
		return m.Close()
	case err := <-m.done:
		_ = m.Close()
		return err
	}
}

// Start opens the store, makes sure the default tenant has a key, and
// starts serving. It returns once the listener is open.
func (m *Main) Start(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(m.Config.DataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	db, err := Open(ctx, m.Config, m.Logger)
	if err != nil {
		return err
	}
	m.DB = db
	if err := m.ensureDefaultKey(ctx); err != nil {
		_ = db.Close()
		return err
	}
	services, err := NewServices(m.Config, db, m.Logger)
	if err != nil {
		_ = db.Close()
		return err
	}
	m.index, m.router = services.Index, services.Router
	registry := prometheus.NewRegistry()
	sleepMetrics, err := newSleepMetrics(registry)
	if err != nil {
		_ = db.Close()
		return err
	}
	if services.Mirror != nil {
		if err := registerMirrorMetrics(registry, services.Mirror); err != nil {
			_ = db.Close()
			return err
		}
	}
	srv, err := NewServer(m.Config, db, services, registry, m.Logger)
	if err != nil {
		_ = db.Close()
		return err
	}
	if m.ln, err = net.Listen("tcp", m.Config.Server.Addr); err != nil {
		_ = db.Close()
		return err
	}
	bg, stop := context.WithCancel(context.Background())
	m.stop = stop
	m.warmed = make(chan struct{})
	m.background.Go(func() { m.preload(bg, services) })
	if services.Embeddings != nil {
		m.background.Go(func() { services.Embeddings.Run(bg, m.Config.Embeddings.Poll) })
	}
	if every := m.Config.Sessions.CleanupInterval; every > 0 {
		m.background.Go(func() { services.Working.CleanupEvery(bg, every) })
	}
	if services.Mirror != nil {
		m.background.Go(func() { services.Mirror.Run(bg, m.Config.Mirror.Poll) })
	}
	m.background.Go(func() { services.Jobs.Run(bg) })
	if every := m.Config.Sleep.Interval; every > 0 {
		m.background.Go(func() { m.sleepEvery(bg, every, services.Sleep, sleepMetrics) })
	}
	// IdleTimeout frees idle keep-alive connections; ReadTimeout bounds a
	// request body trickled in slowly (bodies are at most 1 MiB).
	m.http = &http.Server{Handler: srv, ReadHeaderTimeout: m.Config.Server.ReadHeaderTimeout,
		ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn)}
	m.done = make(chan error, 1)
	go func() {
		if err := m.http.Serve(m.ln); !errors.Is(err, http.ErrServerClosed) {
			m.done <- err
		}
		close(m.done)
	}()
	m.Logger.Info("engram started", "addr", m.ln.Addr().String(), "driver", m.Config.Store.Driver, "data_dir", m.Config.DataDir)
	return nil
}

// preload warms, in the background, the indexes and router models of the
// tenants whose index snapshot files an earlier server left (see
// index.Preload): a big tenant's first recall after a restart does not
// wait seconds for its load.
func (m *Main) preload(ctx context.Context, services *Services) {
	defer close(m.warmed)
	start := time.Now()
	n, err := services.Index.Preload(ctx, func(ctx context.Context) error {
		_, err := services.Router.RouteQuery(ctx, "preload")
		return err
	})
	if err != nil && ctx.Err() == nil {
		m.Logger.Warn("index preload stopped; the other tenants load on first use", "tenants", n, "err", err)
		return
	}
	if n > 0 {
		m.Logger.Info("index preloaded", "tenants", n, "seconds", time.Since(start).Seconds())
	}
}

// Warmed is closed when the background preload that Start began has
// ended.
func (m *Main) Warmed() <-chan struct{} { return m.warmed }

// URL is the base URL the server listens on.
func (m *Main) URL() string {
	addr := m.ln.Addr().String()
	if host, port, err := net.SplitHostPort(addr); err == nil && (host == "::" || host == "0.0.0.0") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	return "http://" + strings.TrimSuffix(addr, "/")
}

// Close stops accepting requests, lets in-flight ones finish within the
// shutdown timeout, then closes the store.
func (m *Main) Close() error {
	var errs []error
	if m.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.Server.ShutdownTimeout)
		defer cancel()
		errs = append(errs, m.http.Shutdown(ctx))
	}
	if m.stop != nil {
		m.stop()
		m.background.Wait()
	}
	if m.index != nil {
		m.index.Close()
	}
	if m.router != nil {
		m.router.Close()
	}
	if m.DB != nil {
		errs = append(errs, m.DB.Close())
	}
	m.Logger.Info("engram stopped")
	return errors.Join(errs...)
}

// mirrorRebuilder lets the forget service rebuild a tenant's mirror files
// without importing the journal package.
type mirrorRebuilder struct{ m *journal.Mirror }

func (r mirrorRebuilder) Rebuild(ctx context.Context, tenant *engram.Tenant) error {
	_, err := r.m.Rebuild(ctx, tenant)
	return err
}
