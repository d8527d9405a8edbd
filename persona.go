package engram

import (
	"context"
	"time"
)

// Persona is an agent's agent.md: Markdown injected first into every
// prompt of the agent (DESIGN §8, /v1/boot).
type Persona struct {
	AgentID   string    `json:"agent_id"`
	Markdown  string    `json:"markdown"`
	Version   int64     `json:"version"`
	MemoryID  string    `json:"memory_id"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PersonaService keeps agents' personas for the tenant in the context.
type PersonaService interface {
	// Persona returns the agent's persona, the given version or (0) the
	// current one. ENOTFOUND.
	Persona(ctx context.Context, agentID string, version int64) (*Persona, error)
	// PutPersona stores a new version. EINVALID for a bad agent id or
	// empty text, ETOOLARGE over the size limit.
	PutPersona(ctx context.Context, agentID, markdown string) (*Persona, error)
}
