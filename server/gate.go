package server

import (
	"context"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/gate"
)

// gated reports whether a write is held to the write gate: always when
// memory.gate is on (a request cannot opt out of the tenant's policy),
// else when the request says "gate": true.
func (s *Server) gated(asked *bool) bool {
	return s.cfg.Gate || asked != nil && *asked
}

// checkGate applies the write gate to m before it is stored (gate.Enforce).
func (s *Server) checkGate(ctx context.Context, m *engram.Memory) error {
	return gate.Enforce(ctx, s.cfg.Memories, m)
}
