package server

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/gate"
)

// checkGate holds m to the write gate when memory.gate (the tenant's, else
// the server's) is on or the request asks with "gate": true: a 422 naming
// the rule, or, in quarantine mode, m marked to be stored quarantined (see
// gate.Policy.Apply).
func (s *Server) checkGate(ctx context.Context, m *engram.Memory, asked *bool) error {
	return gate.Policy{On: s.cfg.Gate, Mode: s.cfg.GateMode}.Apply(ctx, s.cfg.Memories, m, asked)
}

// handleReleaseMemory lets a quarantined memory into recall: it is no
// longer archived or quarantined (a new version, an update event). 404
// for an unknown memory, 409 for one that is not quarantined or is
// deleted; If-Match as on PATCH.
func (s *Server) handleReleaseMemory(c *gin.Context) {
	expect, err := ifMatch(c)
	if err == nil {
		err = queryParams(c)
	}
	if err != nil {
		writeError(c, err)
		return
	}
	respondMemory(c)(s.cfg.Memories.UpdateMemory(c.Request.Context(), memoryID(c),
		engram.MemoryUpdate{Release: true, ExpectVersion: expect}))
}
