package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/gate"
)

// gateVerdict says why the write gate holds m back: the rule it fails and
// the reason, as the gate's 422 words them ("self_contained: …"), read by
// checking m against the gate's rules again, as it stands now (the store
// keeps the flag, not the verdict). "" when m passes now: the memory it
// repeated may be gone, or an edit fixed it.
func (c *Console) gateVerdict(ctx context.Context, m *engram.Memory) (string, error) {
	err := gate.Enforce(ctx, c.cfg.Memories, m)
	switch engram.ErrorCode(err) {
	case "":
		return "", nil
	case engram.EUNPROCESSABLE:
		return strings.TrimPrefix(engram.ErrorMessage(err), "write gate: "), nil
	}
	return "", err
}

// handleRelease lets a quarantined memory into recall: the store's
// release, as POST /v1/memories/{id}/release makes it (quarantined and
// archived cleared as a new version), only if nobody changed the memory
// since the page was drawn. A memory that is not quarantined is a
// conflict, shown on its page, and nothing changes.
func (c *Console) handleRelease(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	expect, err := expected(r)
	if err == nil {
		_, err = c.cfg.Memories.UpdateMemory(r.Context(), id, engram.MemoryUpdate{Release: true, ExpectVersion: expect})
	}
	c.editDone(w, r, id, "released", err)
}
