package server

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/gate"
)

// gateCandidates is how many stored memories each search term of the
// repeat rule reads: the newest that hold the term, in the note's scope.
const gateCandidates = 50

// gated reports whether a write is held to the write gate: always when
// memory.gate is on (a request cannot opt out of the tenant's policy),
// else when the request says "gate": true.
func (s *Server) gated(asked *bool) bool {
	return s.cfg.Gate || asked != nil && *asked
}

// checkGate applies the write gate (package gate) to m before it is
// stored: EUNPROCESSABLE naming the rule when it fails. The repeat rule
// reads the live memories of m's scope (agent and user) that share one of
// the note's longest terms, through the lexical filter of FindMemories;
// a memory at the key being written is the one it replaces, not a repeat.
func (s *Server) checkGate(ctx context.Context, m *engram.Memory) error {
	var stored []gate.Stored
	seen := map[string]bool{}
	for _, term := range gate.QueryTerms(m.Content, 3) {
		f := engram.MemoryFilter{Query: &term, UserID: &m.UserID, Limit: gateCandidates}
		if m.Key == "" {
			f.AgentID = &m.AgentID
		}
		page, err := s.cfg.Memories.FindMemories(ctx, f)
		if err != nil {
			return err
		}
		for _, c := range page.Items {
			if seen[c.ID] || m.Key != "" && c.Key == m.Key {
				continue
			}
			seen[c.ID] = true
			stored = append(stored, gate.NewStored(c.Content))
		}
	}
	v := gate.Check(gate.Note{Content: m.Content, Context: m.Context}, stored)
	if v.Rule == "" {
		return nil
	}
	return engram.Errorf(engram.EUNPROCESSABLE, "write gate: %s: %s", v.Rule, v.Reason)
}

// keyGateMemory is the memory a key write would store, for the gate: its
// text as set_memory reads it (engram.Rules.KeyMemory; the store
// validates the rest under the tenant's rules), its key and user. ok is
// false for a tombstone, and for content that is not JSON.
func keyGateMemory(key, userID string, content json.RawMessage) (*engram.Memory, bool) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return nil, false
	}
	m, _ := engram.DefaultRules().KeyMemory(key, content, engram.KeyWrite{})
	if m == nil {
		return nil, false
	}
	m.UserID = userID
	return m, true
}
