// Package jobs runs engram's long work off the request path: the reflector
// and the sleep cycle of a large tenant (docs/jobs.md). A request on a
// small tenant runs inline and answers as before; on a tenant past
// Config.InlineMaxMemories it queues a job (a row in the store) and
// answers at once. Every server runs a Runner that claims queued jobs —
// and jobs whose server died, once their lease ran out — runs them,
// writing progress and renewing the lease as it goes, and stores the
// outcome. The work itself is idempotent step by step (each reflection,
// each sleep change is its own transaction and is skipped when already
// made), so a job run again after a kill completes what was begun and
// writes nothing twice.
package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/engram-memory/engram"
)

// Store is what jobs need from the store.
type Store interface {
	CreateJob(ctx context.Context, kind string, request json.RawMessage) (*engram.Job, error)
	ClaimJob(ctx context.Context, holder string, lease time.Duration, maxAttempts int) (*engram.Job, string, error)
	RenewJob(ctx context.Context, id, holder string, p engram.JobProgress, lease time.Duration) (bool, error)
	FinishJob(ctx context.Context, id, holder string, p engram.JobProgress, result json.RawMessage, message string) (bool, error)
	ReleaseJobs(ctx context.Context, holder string) error
	FindJobByID(ctx context.Context, id string) (*engram.Job, error)
	FindJobs(ctx context.Context, f engram.JobFilter) (*engram.JobPage, error)
	TenantMemories(ctx context.Context) (int64, error)
}

// Reflector writes the reflections of the tenant in the context.
type Reflector interface {
	Reflect(ctx context.Context, req engram.ReflectRequest) (*engram.ReflectResult, error)
}

// Sleeper runs one sleep cycle of the tenant in the context.
type Sleeper interface {
	Sleep(ctx context.Context) (*engram.SleepResult, error)
}

// Config tunes the jobs.
type Config struct {
	// InlineMaxMemories is the most live memories a tenant may hold for a
	// reflect or sleep to run inline, in its request; a larger tenant's
	// runs as a job. Negative runs everything inline.
	InlineMaxMemories int64
	// Lease is how long a claim lasts without renewal: a server that dies
	// leaves its job to another after at most this long.
	Lease time.Duration
	// Poll is how often an idle runner looks for queued jobs (a job queued
	// through this server starts at once).
	Poll time.Duration
	// MaxAttempts is how many runs a job gets before it is failed.
	MaxAttempts int
	// Categories are the configured L2 categories, to refuse a reflect of
	// an unknown one before it is queued.
	Categories []string
	// Holder names this server in the leases it takes; unique per process.
	Holder string
}

// Service implements engram.JobService and runs the jobs.
type Service struct {
	store   Store
	reflect Reflector
	sleep   Sleeper
	cfg     Config
	log     *slog.Logger
	wake    chan struct{}
}

var _ engram.JobService = (*Service)(nil)

// New returns the jobs service. Zero Lease, Poll and MaxAttempts take
// 30 s, 1 s and 3; an empty Holder is made from the host and pid.
func New(st Store, reflector Reflector, sleeper Sleeper, cfg Config, log *slog.Logger) *Service {
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Holder == "" {
		host, _ := os.Hostname()
		cfg.Holder = fmt.Sprintf("%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())
	}
	return &Service{store: st, reflect: reflector, sleep: sleeper, cfg: cfg, log: log, wake: make(chan struct{}, 1)}
}

// inline reports whether the tenant in ctx is small enough to run long
// work in its request.
func (s *Service) inline(ctx context.Context) (bool, error) {
	if s.cfg.InlineMaxMemories < 0 {
		return true, nil
	}
	n, err := s.store.TenantMemories(ctx)
	if err != nil {
		return false, err
	}
	return n <= s.cfg.InlineMaxMemories, nil
}

// queue stores a job of kind and wakes this server's runner.
func (s *Service) queue(ctx context.Context, kind string, req any) (*engram.Job, error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	j, err := s.store.CreateJob(ctx, kind, raw)
	if err != nil {
		return nil, err
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return j, nil
}

// Reflect implements engram.JobService.
func (s *Service) Reflect(ctx context.Context, req engram.ReflectRequest) (*engram.ReflectResult, *engram.Job, error) {
	if req.Category != "" && !slices.Contains(s.cfg.Categories, req.Category) {
		return nil, nil, engram.Errorf(engram.EINVALID, "unknown category %q", req.Category)
	}
	small, err := s.inline(ctx)
	if err != nil {
		return nil, nil, err
	}
	if small {
		res, err := s.reflect.Reflect(ctx, req)
		return res, nil, err
	}
	j, err := s.queue(ctx, engram.JobReflect, req)
	return nil, j, err
}

// Sleep implements engram.JobService.
func (s *Service) Sleep(ctx context.Context) (*engram.SleepResult, *engram.Job, error) {
	small, err := s.inline(ctx)
	if err != nil {
		return nil, nil, err
	}
	if small {
		res, err := s.sleep.Sleep(ctx)
		return res, nil, err
	}
	j, err := s.queue(ctx, engram.JobSleep, struct{}{})
	return nil, j, err
}

// FindJobByID implements engram.JobService.
func (s *Service) FindJobByID(ctx context.Context, id string) (*engram.Job, error) {
	return s.store.FindJobByID(ctx, id)
}

// FindJobs implements engram.JobService.
func (s *Service) FindJobs(ctx context.Context, f engram.JobFilter) (*engram.JobPage, error) {
	return s.store.FindJobs(ctx, f)
}
