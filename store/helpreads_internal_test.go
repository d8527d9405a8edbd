package store

import (
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram"
)

// TestKindsCache: the process's cache of memories' kinds answers a
// memory's kinds as computed from the version asked about: a new version
// (or the same version at another time) is computed again.
func TestKindsCache(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	m := &engram.Memory{ID: "mem_kinds_cache_test", Version: 1, UpdatedAt: at, Type: "note", Content: "Buy milk, eggs, bread"}
	first := (*helpReads)(nil).kindsOf(m)
	if !slices.Equal(first.features, m.Features()) || first.origin != m.Origin() {
		t.Fatalf("kinds %+v, want %v and %v", first, m.Origin(), m.Features())
	}
	next := *m
	next.Version, next.UpdatedAt, next.Type = 2, at.Add(time.Second), "fact"
	if got := (*helpReads)(nil).kindsOf(&next); !slices.Equal(got.features, next.Features()) {
		t.Errorf("after a new version: %v, want %v", got.features, next.Features())
	}
	same := next
	same.UpdatedAt, same.Type = at.Add(2*time.Second), "reminder"
	if got := (*helpReads)(nil).kindsOf(&same); !slices.Equal(got.features, same.Features()) {
		t.Errorf("same version at another time: %v, want %v", got.features, same.Features())
	}
}
