package gate

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/engram-memory/engram"
)

// candidates is how many stored memories each search term of the repeat
// rule reads: the newest that hold the term, in the note's scope.
const candidates = 50

// Enforce applies the gate to m before it is stored, the same at every
// door (REST, MCP): EUNPROCESSABLE naming the rule when it fails. The
// repeat rule reads the live memories of m's scope (agent and user; the
// user is m's, else the context's) that share one of the note's longest
// terms, through the lexical filter of FindMemories; a memory at the key
// being written is the one it replaces, not a repeat.
func Enforce(ctx context.Context, ms engram.MemoryService, m *engram.Memory) error {
	user := m.UserID
	if user == "" {
		user = engram.UserFromContext(ctx)
	}
	var stored []Stored
	seen := map[string]bool{}
	for _, term := range QueryTerms(m.Content, 3) {
		f := engram.MemoryFilter{Query: &term, UserID: &user, Limit: candidates}
		if m.Key == "" {
			f.AgentID = &m.AgentID
		}
		page, err := ms.FindMemories(ctx, f)
		if err != nil {
			return err
		}
		for _, c := range page.Items {
			if seen[c.ID] || m.Key != "" && c.Key == m.Key {
				continue
			}
			seen[c.ID] = true
			stored = append(stored, NewStored(c.Content))
		}
	}
	v := Check(Note{Content: m.Content, Context: m.Context}, stored)
	if v.Rule == "" {
		return nil
	}
	return engram.Errorf(engram.EUNPROCESSABLE, "write gate: %s: %s", v.Rule, v.Reason)
}

// KeyMemory is the memory a key write would store, for the gate: its text
// as set_memory reads it (engram.Rules.KeyMemory; the store validates the
// rest under the tenant's rules), its key and user. ok is false for a
// tombstone, and for content that is not JSON.
func KeyMemory(key, userID string, content json.RawMessage) (*engram.Memory, bool) {
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
