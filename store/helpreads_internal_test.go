package store

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// TestKindsCache: the process's cache of memories' kinds answers a
// memory's kinds as computed from its fields as they are now: a credit's
// new version (the same fields) keeps the cached kinds, and a change of
// any field the kinds read is computed again.
func TestKindsCache(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	m := &engram.Memory{ID: "mem_kinds_cache_test", Version: 1, UpdatedAt: at, Type: "note", Content: "Buy milk, eggs, bread",
		Tags: []string{"shopping"}, Source: json.RawMessage(`"chat:1"`), AgentID: "a1"}
	first := (*helpReads)(nil).kindsOf(m)
	if !slices.Equal(first.features, m.Features()) || first.origin != m.Origin() {
		t.Fatalf("kinds %+v, want %v and %v", first, m.Origin(), m.Features())
	}
	credited := *m
	credited.Version, credited.UpdatedAt, credited.Reward = 2, at.Add(time.Second), 0.5
	if got := processKinds.get(&credited); &got.features[0] != &first.features[0] {
		t.Errorf("a credited version computed its kinds again")
	}
	for name, change := range map[string]func(*engram.Memory){
		"type":    func(m *engram.Memory) { m.Type = "fact" },
		"content": func(m *engram.Memory) { m.Content = "Ann: buy milk" },
		"tags":    func(m *engram.Memory) { m.Tags = []string{"Ann"} },
		"key":     func(m *engram.Memory) { m.Key = "/user/list" },
		"source":  func(m *engram.Memory) { m.Source = json.RawMessage(`{"kind":"import","name":"x"}`) },
		"agent":   func(m *engram.Memory) { m.AgentID = "a2" },
	} {
		(*helpReads)(nil).kindsOf(&credited)
		next := credited
		change(&next)
		got := (*helpReads)(nil).kindsOf(&next)
		if !slices.Equal(got.features, next.Features()) || got.origin != next.Origin() {
			t.Errorf("after a new %s: %+v, want %v and %v", name, got, next.Origin(), next.Features())
		}
	}
	cached := (*helpReads)(nil).kindsOf(&credited)
	group := newHelpReads()
	if got := group.kindsOf(&credited); &got.features[0] != &cached.features[0] {
		t.Errorf("a feedback group's read computed the kinds again")
	}
}
