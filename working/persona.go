package working

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// An agent's persona is the L2 memory at the key /agents/<agent_id>/persona
// (type persona, private to the agent), so that it is versioned, has a
// history and rollback like any memory, and /v1/boot returns it first.
// The tenant-wide persona at /agent/persona is the fallback boot and
// prompt use for an agent without one.

// PersonaKey returns the key of an agent's persona.
func PersonaKey(agentID string) string { return "/agents/" + agentID + "/persona" }

// TenantPersonaKey is the key of the persona of agents that have none.
const TenantPersonaKey = "/agent/persona"

var personaSource = json.RawMessage(`{"kind":"api","name":"persona"}`)

// PutPersona implements engram.PersonaService.
func (s *Service) PutPersona(ctx context.Context, agentID, markdown string) (*engram.Persona, error) {
	if err := engram.CheckID("agent id", agentID); err != nil {
		return nil, err
	}
	if len(markdown) > s.cfg.Sessions.MaxPersonaBytes {
		return nil, engram.Errorf(engram.ETOOLARGE, "a persona must be at most %d bytes", s.cfg.Sessions.MaxPersonaBytes)
	}
	if strings.TrimSpace(markdown) == "" || !utf8.ValidString(markdown) || strings.ContainsRune(markdown, 0) {
		return nil, engram.Errorf(engram.EINVALID, "a persona must be non-empty UTF-8 Markdown without NUL")
	}
	content, _ := json.Marshal(markdown)
	kind := "persona"
	m, err := s.memories.SetKey(ctx, engram.KeyWrite{Key: PersonaKey(agentID), Content: content, Source: personaSource,
		AgentID: &agentID, Type: &kind})
	if err != nil {
		return nil, err
	}
	return toPersona(agentID, m), nil
}

func toPersona(agentID string, m *engram.Memory) *engram.Persona {
	return &engram.Persona{AgentID: agentID, Markdown: m.Content, Version: m.Version, MemoryID: m.ID, UpdatedAt: m.UpdatedAt}
}

// Persona implements engram.PersonaService: version 0 is the current one;
// an older version comes from the memory's history.
func (s *Service) Persona(ctx context.Context, agentID string, version int64) (*engram.Persona, error) {
	if err := engram.CheckID("agent id", agentID); err != nil {
		return nil, err
	}
	if version < 0 {
		return nil, engram.Errorf(engram.EINVALID, "version must be positive")
	}
	m, err := s.memories.FindMemoryByKey(ctx, PersonaKey(agentID))
	if err != nil {
		if engram.ErrorCode(err) == engram.ENOTFOUND {
			return nil, engram.Errorf(engram.ENOTFOUND, "agent %s has no persona", agentID)
		}
		return nil, err
	}
	if version == 0 || version == m.Version {
		return toPersona(agentID, m), nil
	}
	events, err := s.memories.FindMemoryEvents(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		if e.Version == version && e.After != nil && e.After.Valid {
			return toPersona(agentID, e.After), nil
		}
	}
	return nil, engram.Errorf(engram.ENOTFOUND, "agent %s has no persona version %d", agentID, version)
}

// personaText returns the persona a prompt starts with, the agent's else
// the tenant's, and its memory id; "" when there is none.
func (s *Service) personaText(ctx context.Context, agentID string) (string, string, error) {
	keys := []string{TenantPersonaKey}
	if agentID != "" {
		keys = append([]string{PersonaKey(agentID)}, keys...)
	}
	for _, k := range keys {
		m, err := s.memories.FindMemoryByKey(ctx, k)
		switch {
		case engram.ErrorCode(err) == engram.ENOTFOUND:
		case err != nil:
			return "", "", err
		case !m.Archived && (m.AgentID == "" || m.AgentID == agentID):
			return m.Content, m.ID, nil
		}
	}
	return "", "", nil
}
