// Package web is engram's console for analysts, operators and training
// teams (DESIGN §2): server-rendered html/template pages under /console/,
// static files embedded with go:embed and served under content-hashed
// names, inline SVG charts drawn by the server, and a little vanilla
// JavaScript; no Node build step.
//
// A person signs in with an API key and sees that key's tenant. The
// session lives in the store (engram.ConsoleSessionStore), so every
// server on one database accepts it and signing out ends it everywhere;
// the cookie is HttpOnly and SameSite=Strict, and every form carries the
// session's CSRF token. A key of the admin tenant (the deployment's
// default tenant, auth.default_tenant) may switch to any tenant.
//
// The package imports the root package and the kit only (internal/wire
// for the one code→status table): it declares the small interfaces it
// needs, and cmd/engram passes the real services.
package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/ratelimit"
	"github.com/engram-memory/engram/internal/wire"
)

// Authenticator checks an API key (engram.AuthService).
type Authenticator interface {
	// Authenticate returns the live key matching secret, EUNAUTHORIZED
	// when it is unknown or revoked.
	Authenticate(ctx context.Context, secret string) (*engram.APIKey, error)
}

// Tenants lists the tenants an admin may switch to.
type Tenants interface {
	// FindTenants returns every tenant, by name.
	FindTenants(ctx context.Context) ([]*engram.Tenant, error)
}

// Scorer explains a memory's score factors (relevance aside).
type Scorer interface {
	// Score returns the breakdown of m at the given relevance.
	Score(m *engram.Memory, relevance float64) engram.ScoreBreakdown
}

// PairSource reads the tenant's preference pairs and unpaired examples.
type PairSource interface {
	// EachPair calls fn for each pair matching f, oldest first.
	EachPair(ctx context.Context, f engram.PairFilter, fn func(*engram.Pair) error) (string, error)
	// EachUnpaired calls fn for each judged answer matching f.
	EachUnpaired(ctx context.Context, f engram.PairFilter, fn func(*engram.Unpaired) error) (string, error)
}

// SessionLister lists the tenant's live L1 sessions (the store).
type SessionLister interface {
	// FindSessions returns up to limit live sessions, the most recently
	// active first.
	FindSessions(ctx context.Context, limit int) ([]*engram.Session, error)
}

// Impacts explains what feedback taught about a memory.
type Impacts interface {
	// Impact returns the memory's helpfulness factor, its evidence and
	// its measured effect. ENOTFOUND.
	Impact(ctx context.Context, memoryID string) (*engram.Impact, error)
	// RaterWeight is how much a rater of reputation r counts, in [0, 1].
	RaterWeight(r engram.Reputation) float64
}

// Raters reads the tenant's rater reputations (the store).
type Raters interface {
	// FindReputations returns up to limit raters, those that disagreed
	// most with other raters' evidence first.
	FindReputations(ctx context.Context, limit int) ([]*engram.RaterReputation, error)
}

// Exporter writes up to limit lines (0: all) of the tenant's pair export
// in format to w and returns how many it wrote; EINVALID for an unknown
// format. cmd/engram wires learning.Export, the one export loop, so the
// download holds what the API and the CLI export.
type Exporter func(ctx context.Context, w io.Writer, format string, limit int) (int, error)

// Formats are the pair export formats, in the order the console shows them.
var Formats = []string{"trl", "trl-conversational", "trl-unpaired", "openai"}

// Config is what the console needs. Every service acts for the tenant in
// the request's context, which the console sets from the session.
type Config struct {
	Auth        Authenticator
	Sessions    engram.ConsoleSessionStore
	Tenants     Tenants
	Memories    engram.MemoryService
	Reflections engram.ReflectionService
	Recall      engram.RecallService
	Pairs       PairSource
	Export      Exporter
	Insights    engram.ConsoleInsights
	Scorer      Scorer
	// LiveSessions and Working show L1 working memory (the sessions
	// pages); without them the pages answer 404.
	LiveSessions SessionLister
	Working      engram.SessionService
	// Impacts and Raters add helpfulness, impact and rater weights to
	// the learning page; optional.
	Impacts Impacts
	Raters  Raters
	// Links and Aliases show a memory's links (both directions) and
	// aliases on its page; optional.
	Links   engram.LinkService
	Aliases engram.AliasService
	// Jobs, when set, runs a regenerate's reflect as POST /v1/reflect
	// does: inline on a small tenant, as a job on a large one, whose page
	// (/console/jobs/{id}) follows it. Without it the reflect is inline.
	Jobs engram.JobService
	// Markdown renders a reflection's Markdown to safe HTML (raw HTML
	// omitted), for its older versions.
	Markdown func(src string) (string, error)
	// Categories are the L2 categories offered as filters.
	Categories []string
	// AdminTenant names the tenant whose keys may switch tenants.
	AdminTenant string
	// MaxBudget is the largest token budget the playground accepts.
	MaxBudget int
	// SessionTTL is how long a sign-in lasts (default 12 h).
	SessionTTL time.Duration
	// Failures, when set, slows failed sign-ins per client address (the
	// server shares it for bad bearer keys).
	Failures *ratelimit.Limiter
	Logger   *slog.Logger
	Now      engram.Clock
}

// Console is the console's http.Handler, mounted at /console/.
type Console struct {
	cfg   Config
	mux   *http.ServeMux
	pages map[string]*template.Template
}

// New parses the templates and builds the routes.
func New(cfg Config) (*Console, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.MaxBudget <= 0 {
		cfg.MaxBudget = 8000
	}
	if cfg.Auth == nil || cfg.Sessions == nil || cfg.Memories == nil || cfg.Insights == nil {
		return nil, errors.New("web: auth, sessions, memories and insights are required")
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c := &Console{cfg: cfg, mux: http.NewServeMux(), pages: pages}
	m := c.mux
	m.HandleFunc("GET /console/static/{name}", serveAsset)
	m.HandleFunc("GET /console/lang", c.handleLang)
	m.HandleFunc("GET /console/signin", c.handleSignInPage)
	m.HandleFunc("POST /console/signin", c.handleSignIn)
	m.HandleFunc("GET /console", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/console/", http.StatusMovedPermanently)
	})
	m.Handle("POST /console/signout", c.signedIn(c.handleSignOut))
	m.Handle("POST /console/tenant", c.signedIn(c.handleSwitchTenant))
	m.Handle("GET /console/{$}", c.signedIn(c.handleOverview))
	m.Handle("GET /console/memories", c.signedIn(c.handleMemories))
	m.Handle("GET /console/memories/{id}", c.signedIn(c.handleMemory))
	m.Handle("POST /console/memories/{id}/rollback", c.signedIn(c.handleRollback))
	m.Handle("POST /console/memories/{id}/edit", c.signedIn(c.handleEdit))
	m.Handle("POST /console/memories/{id}/revised", c.signedIn(c.handleRevised))
	m.Handle("POST /console/memories/{id}/tombstone", c.signedIn(c.handleTombstone))
	m.Handle("POST /console/memories/{id}/release", c.signedIn(c.handleRelease))
	m.Handle("POST /console/reflections/{id}/regenerate", c.signedIn(c.handleRegenerate))
	m.Handle("GET /console/reflections", c.signedIn(c.handleReflections))
	m.Handle("GET /console/reflections/{id}", c.signedIn(c.handleReflection))
	m.Handle("GET /console/jobs/{id}", c.signedIn(c.handleJob))
	m.Handle("GET /console/feedback", c.signedIn(c.handleFeedback))
	m.Handle("GET /console/recalls/{id}", c.signedIn(c.handleRecall))
	m.Handle("GET /console/pairs", c.signedIn(c.handlePairs))
	m.Handle("GET /console/pairs/download", c.signedIn(c.handleDownload))
	m.Handle("GET /console/learning", c.signedIn(c.handleLearning))
	m.Handle("GET /console/sessions", c.signedIn(c.handleSessions))
	m.Handle("GET /console/sessions/{id}", c.signedIn(c.handleSession))
	m.Handle("GET /console/playground", c.signedIn(c.handlePlayground))
	m.Handle("POST /console/playground", c.signedIn(c.handlePlayground))
	m.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		c.renderError(w, r, nil, engram.Errorf(engram.ENOTFOUND, "%s", tr(langOf(r), "error.nopage")))
	})
	return c, nil
}

// ServeHTTP implements http.Handler: security headers, then the routes.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Only the console's own scripts, styles and forms; charts are inline
	// SVG markup, which needs no style or script source.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// statusOf is the status the console answers err with: the one
// code→status table of every door (wire.Status), so that a refusal reads
// alike here and on the API (too_large is 413 on both).
func statusOf(err error) int {
	status, _ := wire.Status(err)
	return status
}

// errForbidden is the code of a refused form post (403).
const errForbidden = wire.EFORBIDDEN

// errorMessage is what a person sees: the message of a known error, a
// plain "internal error" otherwise (logged in full).
func (c *Console) errorMessage(r *http.Request, err error) string {
	var e *engram.Error
	if errors.As(err, &e) && e.Code != engram.EINTERNAL {
		return e.Message
	}
	c.cfg.Logger.Error("console", "path", r.URL.Path, "err", err)
	return "internal error"
}

// safeNext accepts a redirect target inside the console only.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/console/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return "/console/"
	}
	return next
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func pct(part, whole int) string {
	if whole <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(part)/float64(whole))
}
