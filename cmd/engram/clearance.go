package main

import (
	"context"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/clearance"
	"github.com/engram-memory/engram/store"
)

// The reads of recall, boot, the context block and the prompt go through
// the reader's clearance (internal/clearance) here, where the recall
// pipeline meets the store, so that no door can forget it.

// PinnedMemories implements learning.RecallStore.
func (s recallStore) PinnedMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error) {
	ms, err := s.DB.PinnedMemories(ctx, agentID, limit)
	return clearance.SeeAll(ctx, ms), err
}

// RecentMemories implements learning.RecallStore.
func (s recallStore) RecentMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error) {
	ms, err := s.DB.RecentMemories(ctx, agentID, limit)
	return clearance.SeeAll(ctx, ms), err
}

// FindMemoryByKey implements learning.RecallStore (personas).
func (s recallStore) FindMemoryByKey(ctx context.Context, key string) (*engram.Memory, error) {
	m, err := s.DB.FindMemoryByKey(ctx, key)
	return clearance.SeeOne(ctx, m, err)
}

// denseStore is the vector store as recall sees it.
type denseStore struct{ *store.DB }

// VectorSearch implements learning.VectorStore.
func (s denseStore) VectorSearch(ctx context.Context, model string, vec []float32, agentID string, limit int) ([]engram.LexicalHit, error) {
	hits, err := s.DB.VectorSearch(ctx, model, vec, agentID, limit)
	return clearance.SeeHits(ctx, hits), err
}
