package clearance

import (
	"context"

	"github.com/engram-memory/engram"
)

// Aliases is the alias store as a reader may use it: an alias names its
// target and is a version of it, so setting, reading or deleting one, and
// listing a memory's aliases, are refused as guard refuses a write when
// the target is above the reader's clearance (404 in omit mode, 403 in
// mask mode), before anything changes.
type Aliases struct {
	engram.AliasService
	Memories engram.MemoryService // the store's own, unfiltered
}

// SetAlias implements engram.AliasService.
func (s Aliases) SetAlias(ctx context.Context, alias, key string) (*engram.Alias, error) {
	if engram.ReaderFromContext(ctx) != nil {
		m, err := s.Memories.FindMemoryByKey(ctx, key)
		if err := guard(ctx, m, err); err != nil {
			return nil, err
		}
	}
	return s.AliasService.SetAlias(ctx, alias, key)
}

// FindAlias implements engram.AliasService.
func (s Aliases) FindAlias(ctx context.Context, alias string) (*engram.Alias, error) {
	a, err := s.AliasService.FindAlias(ctx, alias)
	if err != nil {
		return nil, err
	}
	if err := guardID(ctx, s.Memories, a.MemoryID); err != nil {
		return nil, err
	}
	return a, nil
}

// DeleteAlias implements engram.AliasService.
func (s Aliases) DeleteAlias(ctx context.Context, alias string) (*engram.Alias, error) {
	if _, err := s.FindAlias(ctx, alias); err != nil {
		return nil, err
	}
	return s.AliasService.DeleteAlias(ctx, alias)
}

// FindAliases implements engram.AliasService.
func (s Aliases) FindAliases(ctx context.Context, memoryID string) ([]*engram.Alias, error) {
	if err := guardID(ctx, s.Memories, memoryID); err != nil {
		return nil, err
	}
	return s.AliasService.FindAliases(ctx, memoryID)
}
