package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

var _ engram.LifecycleService = (*DB)(nil)

// tenantTables are the tables that hold a tenant's data, parents first:
// what an export writes and an import reads, in this order, and what a
// reset empties, in the reverse order. tenants, api_keys, tenant_usage
// (kept by triggers), feed_cursors (positions in a feed that goes on),
// console_sessions and jobs (work the tenant asked for, and its outcome)
// belong to the tenant's account, not its data.
var tenantTables = []string{
	"memories", "memory_events", "memory_aliases", "memory_links", "memory_vectors", "recalls", "interactions", "feedback", "feedback_credits", "feedback_pending",
	"pairs", "reflections", "reflection_versions", "sessions", "session_events", "working_states",
	"memory_help", "rater_reputation",
}

// PruneMemories implements engram.LifecycleService. The matching memories
// are found first, then each is archived or tombstoned in its own
// transaction through the same path as PATCH and DELETE, so every change
// is an event in its history and on the change feed; a prune that fails
// half-way leaves the rest untouched and can be run again.
func (db *DB) PruneMemories(ctx context.Context, f engram.PruneFilter) (*engram.PruneResult, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	now := db.now()
	res := &engram.PruneResult{DryRun: f.DryRun, IDs: []string{}}
	filter := engram.MemoryFilter{Category: f.Category, UserID: f.UserID, IncludeArchived: f.Action == engram.PruneDelete,
		Limit: db.rules.Limits.MaxListLimit}
	for {
		page, err := db.FindMemories(ctx, filter)
		if err != nil {
			return nil, err
		}
		for _, m := range page.Items {
			switch {
			case f.Before != nil && !m.CreatedAt.Before(*f.Before):
			case f.BelowRetention != nil && engram.Retention(m.AgeDays(now), engram.EmotionStability(m.Stability, engram.EmotionOf(m))) >= *f.BelowRetention:
			case f.BelowRetention != nil && m.Priority == engram.P0:
			default:
				res.IDs = append(res.IDs, m.ID)
			}
		}
		if page.NextCursor == "" {
			break
		}
		filter.Cursor = page.NextCursor
	}
	res.Matched = len(res.IDs)
	if f.DryRun {
		return res, nil
	}
	archived := true
	for _, id := range res.IDs {
		var err error
		if f.Action == engram.PruneArchive {
			_, err = db.UpdateMemory(ctx, id, engram.MemoryUpdate{Archived: &archived})
			res.Archived++
		} else {
			_, err = db.DeleteMemory(ctx, id, nil)
			res.Deleted++
		}
		if err != nil && engram.ErrorCode(err) != engram.ENOTFOUND {
			return nil, fmt.Errorf("store: prune %s: %w", id, err)
		}
	}
	return res, nil
}

// ResetTenant implements engram.LifecycleService, in one transaction.
// The change feed goes on from where it was, with one gap: the reset
// advances the tenant's feed by two and writes a single "reset" event
// after the gap, so that every follower that applied the old events (the
// index, the router) meets the gap and reloads the now empty tenant, and
// an import after the reset is numbered after it.
func (db *DB) ResetTenant(ctx context.Context) (*engram.ResetResult, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	res := &engram.ResetResult{Removed: map[string]int64{}}
	err = db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(`SELECT name FROM tenants WHERE id = ?`, tenant).Scan(&res.Tenant).Error; err != nil {
			return fmt.Errorf("store: reset: %w", err)
		}
		for i := len(tenantTables) - 1; i >= 0; i-- {
			r := tx.Exec(`DELETE FROM `+tenantTables[i]+` WHERE tenant_id = ?`, tenant)
			if r.Error != nil {
				return fmt.Errorf("store: reset %s: %w", tenantTables[i], r.Error)
			}
			res.Removed[tenantTables[i]] = r.RowsAffected
		}
		return db.feedGap(tx, tenant, "reset")
	})
	if err != nil {
		return nil, err
	}
	db.vectors.drop(tenant)
	return res, nil
}

// feedGap advances the tenant's feed past a gap and writes one event of
// action for no memory after it (see ResetTenant).
func (db *DB) feedGap(tx *gorm.DB, tenant, action string) error {
	var head int64
	if err := tx.Raw(`UPDATE tenants SET feed_seq = feed_seq + 2 WHERE id = ? RETURNING feed_seq`, tenant).
		Scan(&head).Error; err != nil {
		return fmt.Errorf("store: advance feed: %w", err)
	}
	if err := tx.Exec(`INSERT INTO memory_events (tenant_id, memory_id, version, action, actor, created_at, feed_seq)
		VALUES (?, ?, ?, ?, '{}', ?, ?)`, tenant, action+":"+tenant, head, action, db.now().UTC(), head).Error; err != nil {
		return fmt.Errorf("store: feed gap: %w", err)
	}
	return nil
}
