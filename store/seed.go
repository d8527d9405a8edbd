package store

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-memory/engram"
	"gorm.io/gorm"
)

// SeedMemories stores ms for the tenant in ctx in one transaction of
// multi-row inserts, and nothing else: no duplicate guard, no quota, no
// create events in the change feed. It sets each memory's id, version and
// times. It is the setup of benchmarks that need millions of memories
// (`engram bench users`) on a database no server has read yet: an index
// loaded before the seed never learns of these memories, since the feed
// does not carry them. Each memory is validated like a created one; an
// invalid one fails the whole call and stores nothing.
func (db *DB) SeedMemories(ctx context.Context, ms []*engram.Memory) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	now := db.now().UTC().Truncate(time.Microsecond)
	rows := make([]memoryRow, len(ms))
	for i, m := range ms {
		db.rules.ApplyDefaults(m)
		if err := db.rules.Validate(m); err != nil {
			return fmt.Errorf("store: seed memories[%d]: %w", i, err)
		}
		if err := engram.CheckUserID(m.UserID); err != nil {
			return fmt.Errorf("store: seed memories[%d]: %w", i, err)
		}
		m.ID, m.Valid, m.Archived, m.Version = newMemoryID(now), true, false, 1
		m.Stability = db.rules.Scoring.Stability(m.Priority)
		m.CreatedAt, m.UpdatedAt, m.ReinforcedAt = now, now, now
		rows[i].TenantID = tenant
		db.fromMemory(&rows[i], m)
	}
	if len(rows) == 0 {
		return nil
	}
	if err := db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.CreateInBatches(rows, insertBatchRows).Error
	}); err != nil {
		return fmt.Errorf("store: seed memories: %w", err)
	}
	return nil
}
