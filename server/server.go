// Package server is engram's HTTP JSON API (v1) on gin: authentication by
// tenant API key, request limits, one error shape, request ids, structured
// logs and Prometheus metrics. Handlers hold the small service interfaces
// they need from the root package; cmd/engram wires the implementations.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/ratelimit"
)

// Limits bound what one request may send.
type Limits struct {
	MaxBodyBytes int64
	MaxJSONDepth int
	MaxBatch     int
	Keys         engram.KeyLimits
	// MaxImportBytes bounds the body of POST /v1/import.
	MaxImportBytes int64
	// MaxBudget is recall.max_budget: a /v1/boot that names no token_limit
	// is rendered within engram.DefaultBudget of it, as over MCP. Zero
	// leaves that default uncapped (the recall service still checks).
	MaxBudget int
}

// Pinger reports whether the store answers, for /healthz.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Config holds what New needs.
type Config struct {
	Memories    engram.MemoryService
	Auth        engram.AuthService
	Router      engram.RouterService
	Recall      Recaller
	Feedback    engram.FeedbackService
	Reflections engram.ReflectionService
	// Jobs, when set, runs a large tenant's reflect as a job and serves
	// /v1/jobs; nil: reflect always answers in its request.
	Jobs engram.JobService
	// Aliases stores key aliases (/v1/aliases/…); nil: no routes.
	Aliases engram.AliasService
	// Users erases end users (DELETE /v1/users/{id}); nil: no route.
	Users          engram.UserService
	Export         Exporter
	Health         Pinger
	Limits         Limits
	Logger         *slog.Logger
	TrustedProxies []string
	// Registry receives engram's metrics; /metrics serves it.
	Registry *prometheus.Registry
	// Quotas, when set, reports the writes quotas refused, for /metrics.
	Quotas QuotaRefusals
	// Failures, when set, slows bad bearer keys per client address (REST
	// and MCP); cmd/engram shares it with the console's sign-in.
	Failures *ratelimit.Limiter
	// Console and MCP, when set, are mounted at /console/ and /mcp: the web
	// console and the MCP server are their own packages, and the server
	// only routes to them, behind its request id, recovery, logs and
	// metrics. Each authenticates on its own terms (a session cookie, a
	// bearer key).
	Console http.Handler
	MCP     http.Handler

	// Sessions, Personas and Prompt serve L1 working memory, agents'
	// personas and /v1/prompt; their routes exist only when set.
	Sessions engram.SessionService
	Personas engram.PersonaService
	Prompt   engram.PromptService

	// AdminKey, when set with Admin, turns the admin API on
	// (/v1/admin/...); without it those paths are 404.
	AdminKey string
	Admin    Admin
	// Transfer, when set, serves GET /v1/export and POST /v1/import.
	Transfer engram.TransferService

	// Gate is memory.gate: on holds every memory write to the write gate
	// (package gate); off holds only writes that ask with "gate": true.
	Gate bool
	// GateMode is memory.gate_mode: engram.GateRefuse (a 422) or
	// engram.GateQuarantine (stored quarantined); a tenant's own gate and
	// gate_mode override both.
	GateMode string
	// AsyncFeedback is feedback.async: every POST /v1/feedback is
	// answered 202 once queued, as with Prefer: respond-async.
	AsyncFeedback bool

	// HealthDetails add named parts to /healthz, each the value its
	// function returns now (the file mirror's state, say). They describe
	// copies and background work, not the store, so they never change the
	// status: /healthz is 503 only when the store does not answer.
	HealthDetails map[string]func() any
}

// Server is the HTTP API.
type Server struct {
	cfg     Config
	engine  *gin.Engine
	metrics *metrics
	trusted []netip.Prefix // cfg.TrustedProxies
}

func init() { gin.SetMode(gin.ReleaseMode) }

// New builds the routes. It never uses gin.Default: logging, recovery and
// trusted proxies are engram's own.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Server{cfg: cfg, engine: gin.New()}
	var err error
	if s.metrics, err = newMetrics(cfg.Registry, cfg.Memories, cfg.Quotas); err != nil {
		return nil, err
	}
	e := s.engine
	if err := e.SetTrustedProxies(cfg.TrustedProxies); err != nil {
		return nil, err
	}
	if s.trusted, err = parseProxies(cfg.TrustedProxies); err != nil {
		return nil, err
	}
	e.HandleMethodNotAllowed = true
	// A redirect is not JSON and would replay a write on another path:
	// a wrong path is a plain 404.
	e.RedirectTrailingSlash = false
	e.ContextWithFallback = true
	e.Use(s.requestID, s.recoverer, s.logRequests, s.metrics.middleware, s.peerInfo)
	e.NoRoute(func(c *gin.Context) { writeError(c, engram.Errorf(engram.ENOTFOUND, "no such endpoint")) })
	e.NoMethod(func(c *gin.Context) {
		writeError(c, &engram.Error{Code: errMethod, Message: "method not allowed on this endpoint"})
	})

	e.GET("/healthz", s.handleHealth)
	e.GET("/metrics", gin.WrapH(s.metrics.handler()))
	e.GET("/openapi.json", handleOpenAPI)
	if cfg.Console != nil {
		e.Any("/console", gin.WrapH(cfg.Console))
		e.Any("/console/*path", gin.WrapH(cfg.Console))
	}
	if cfg.MCP != nil {
		e.Any("/mcp", s.slowGuessing, gin.WrapH(cfg.MCP))
	}

	if cfg.AdminKey != "" && cfg.Admin != nil {
		s.adminRoutes()
	}
	v1 := e.Group("/v1", s.slowGuessing, s.authenticate, strictQuery)
	if cfg.Transfer != nil {
		v1.GET("/export", s.handleExport)
		v1.POST("/import", s.handleImport)
	}
	v1.POST("/memories", s.handleCreateMemory)
	v1.POST("/memories/batch", s.handleCreateBatch)
	v1.GET("/memories", s.handleListMemories)
	v1.GET("/memories/:id", s.handleGetMemory)
	v1.PATCH("/memories/:id", s.handlePatchMemory)
	v1.DELETE("/memories/:id", s.handleDeleteMemory)
	v1.GET("/memories/:id/history", s.handleMemoryHistory)
	v1.GET("/memories/:id/impact", s.handleMemoryImpact)
	v1.POST("/memories/:id/rollback", s.handleRollbackMemory)
	v1.POST("/memories/:id/release", s.handleReleaseMemory)
	s.addLinkRoutes(v1)
	s.addAliasRoutes(v1)
	v1.POST("/route", s.handleRoute)
	v1.POST("/recall", s.handleRecall)
	v1.GET("/context", s.handleContext)
	v1.GET("/boot", s.handleBoot)
	v1.POST("/interactions", s.handleCreateInteraction)
	v1.POST("/feedback", s.handleFeedback)
	v1.GET("/feedback/:id", s.handleFeedbackStatus)
	v1.GET("/pairs", s.handlePairs)
	if cfg.Reflections != nil {
		v1.POST("/reflect", s.handleReflect)
		v1.GET("/reflections", s.handleListReflections)
		v1.GET("/reflections/:id", s.handleGetReflection)
	}
	if cfg.Jobs != nil {
		v1.POST("/sleep", s.handleSleep)
		v1.GET("/jobs", s.handleListJobs)
		v1.GET("/jobs/:id", s.handleGetJob)
	}
	if cfg.Sessions != nil {
		v1.Any("/sessions/*rest", s.handleSessions)
	}
	if cfg.Personas != nil {
		v1.GET("/agents/:id/persona", s.handleGetPersona)
		v1.PUT("/agents/:id/persona", s.handlePutPersona)
	}
	if cfg.Prompt != nil {
		v1.POST("/prompt", s.handlePrompt)
	}
	v1.PUT("/keys/*key", s.handlePutKey)
	v1.GET("/keys/*key", s.handleGetKey)
	v1.DELETE("/keys/*key", s.handleDeleteKey)
	if cfg.Users != nil {
		v1.DELETE("/users/:id", s.handleForgetUser)
	}
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

func (s *Server) handleHealth(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	body := gin.H{"status": "ok"}
	for name, detail := range s.cfg.HealthDetails {
		body[name] = detail()
	}
	if s.cfg.Health != nil {
		if err := s.cfg.Health.Ping(ctx); err != nil {
			s.cfg.Logger.Error("health check failed", "err", err)
			body["status"] = "unavailable"
			c.JSON(http.StatusServiceUnavailable, body)
			return
		}
	}
	c.JSON(http.StatusOK, body)
}
