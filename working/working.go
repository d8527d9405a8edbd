// Package working is engram's L1 layer (DESIGN §1, §8): working memory per
// run or thread. A session holds events (messages, triggers, queries,
// sub-tasks, decisions, tool calls, model responses, instructions), a JSON
// state document with an optional JSON Schema (and one per resource that
// several sessions share), and a TTL. Its context is a prompt section
// within a token budget: a fixed zone that is never compressed and a
// sliding zone whose older rounds are. Messages become L2 episodes at
// once; ending a session distils its decisions into L2 strategies.
//
// Everything lives in the store, so several servers on one database serve
// the same sessions. The package depends on the root package's interfaces
// only; cmd/engram wires it to the store.
package working

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/engram-memory/engram"
)

// Store is what the working memory needs from the store.
type Store interface {
	AppendSessionEvents(ctx context.Context, sessionID, resourceID string, events []*engram.SessionEvent, ttl time.Duration) (*engram.Session, *engram.SessionEvent, error)
	FindSession(ctx context.Context, sessionID string) (*engram.Session, error)
	SessionEvents(ctx context.Context, sessionID string) (*engram.Session, []*engram.SessionEvent, error)
	SessionEventsPage(ctx context.Context, sessionID string, page engram.EventPage) (*engram.EventList, error)
	SetEventMemories(ctx context.Context, sessionID string, ids map[int64]string) error
	CloseSession(ctx context.Context, sessionID, outcome, note string) (*engram.Session, error)
	DeleteExpiredSessions(ctx context.Context) (int64, error)
	FindWorkingState(ctx context.Context, scope, scopeID string) (*engram.WorkingState, error)
	UpdateWorkingState(ctx context.Context, sessionID, scope, scopeID string, ttl time.Duration, change func(cur *engram.WorkingState) (*engram.WorkingState, error)) (*engram.WorkingState, error)
	// CheckQuota is EQUOTA when the tenant has no room for memories more
	// memories of bytes more bytes; it writes nothing.
	CheckQuota(ctx context.Context, memories, bytes int64) error
}

// Memories is what the working memory needs of L2: episodes and
// strategies go through the write guard of CreateMemories; personas are
// keys.
type Memories interface {
	CreateMemories(ctx context.Context, ms []*engram.Memory) ([]*engram.CreateResult, error)
	FindMemoryByID(ctx context.Context, id string) (*engram.Memory, error)
	UpdateMemory(ctx context.Context, id string, upd engram.MemoryUpdate) (*engram.Memory, error)
	SetKey(ctx context.Context, w engram.KeyWrite) (*engram.Memory, error)
	FindMemoryByKey(ctx context.Context, key string) (*engram.Memory, error)
	FindMemoryEvents(ctx context.Context, id string) ([]*engram.MemoryEvent, error)
}

// Config is what New needs besides the services.
type Config struct {
	Sessions   engram.SessionsConfig
	Limits     engram.LimitsConfig
	Categories []string // the L2 categories; episodes take the router's best of them
	MaxBudget  int      // largest token_limit / token_budget accepted
}

// Service implements engram.SessionService, engram.PersonaService and
// engram.PromptService.
type Service struct {
	store    Store
	memories Memories
	router   engram.RouterService
	recall   engram.RecallService
	tok      engram.TokenCounter
	cfg      Config
	chat     *Chat
	now      engram.Clock
	log      *slog.Logger
}

var (
	_ engram.SessionService = (*Service)(nil)
	_ engram.PersonaService = (*Service)(nil)
	_ engram.PromptService  = (*Service)(nil)
)

// New returns a Service. recall answers the memories part of a prompt.
func New(store Store, memories Memories, router engram.RouterService, recall engram.RecallService, tok engram.TokenCounter,
	cfg Config, now engram.Clock, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{store: store, memories: memories, router: router, recall: recall, tok: tok, cfg: cfg, now: now, log: log}
	if c := cfg.Sessions; c.ChatBaseURL != "" {
		s.chat = NewChat(c.ChatBaseURL, c.ChatModel, c.ChatAPIKey, c.ChatTimeout)
	}
	return s
}

// Cleanup deletes the expired sessions of every tenant and returns how
// many it deleted.
func (s *Service) Cleanup(ctx context.Context) (int64, error) {
	return s.store.DeleteExpiredSessions(ctx)
}

// sessionSource is the provenance of the memories a session writes.
func sessionSource(sessionID, locator string) json.RawMessage {
	m := map[string]string{"kind": "session", "name": sessionID}
	if locator != "" {
		m["locator"] = locator
	}
	b, _ := json.Marshal(m)
	return b
}
