package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// FindTenants returns every tenant, by name.
func (db *DB) FindTenants(ctx context.Context) ([]*engram.Tenant, error) {
	var rows []tenantRow
	if err := db.r.WithContext(ctx).Order("name").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list tenants: %w", err)
	}
	out := make([]*engram.Tenant, len(rows))
	for i, r := range rows {
		out[i] = &engram.Tenant{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// FoldFeedbackEvents compacts the tenant's event log: of each run of
// consecutive feedback events of one memory older than before, only the
// last is kept. A credit's delta event that stays takes what the ones it
// replaces changed and it did not (engram.MemoryDelta.Fold), and a full
// event's "after" is the state the run ended in, so the history still
// answers and a rollback can still go to every version kept. Deltas and
// full events fold separately: a delta needs the full state before it.
// An event a change-feed consumer has not yet applied (its cursor is
// behind) is never removed; a follower without a cursor (the index, the
// router) that is behind meets a gap in the sequence and reloads. It
// returns the number of events removed.
func (db *DB) FoldFeedbackEvents(ctx context.Context, before time.Time) (int64, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return 0, err
	}
	// Without consumers every event is applied; MIN over no rows is NULL.
	var applied int64
	if err := db.w.WithContext(ctx).Raw(`SELECT COALESCE(MIN(seq), ?) FROM feed_cursors WHERE tenant_id = ?`,
		int64(1<<62), tenant).Scan(&applied).Error; err != nil {
		return 0, fmt.Errorf("store: feed cursors: %w", err)
	}
	cut := before.UTC()
	// Two servers folding one tenant delete overlapping rows: retried.
	var res *gorm.DB
	_ = db.retry(ctx, func() error {
		res = db.w.WithContext(ctx).Exec(`DELETE FROM memory_events
		WHERE tenant_id = ? AND action = ? AND delta IS NULL AND created_at < ? AND (feed_seq IS NULL OR feed_seq <= ?)
		AND EXISTS (SELECT 1 FROM memory_events n WHERE n.memory_id = memory_events.memory_id
			AND n.version = memory_events.version + 1 AND n.action = ? AND n.delta IS NULL AND n.created_at < ?)`,
			tenant, engram.ActionFeedback, cut, applied, engram.ActionFeedback, cut)
		return res.Error
	})
	if res.Error != nil {
		return 0, fmt.Errorf("store: fold feedback events: %w", res.Error)
	}
	var folded int64
	err = db.retry(ctx, func() error {
		folded = 0
		return db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			n, err := foldDeltas(tx, tenant, cut, applied)
			folded = n
			return err
		})
	})
	if err != nil {
		return 0, fmt.Errorf("store: fold feedback deltas: %w", err)
	}
	return res.RowsAffected + folded, nil
}

// foldDeltas folds each run of one memory's delta events with consecutive
// versions, created before cut and applied by every cursor, into its last
// event, in one transaction.
func foldDeltas(tx *gorm.DB, tenant string, cut time.Time, applied int64) (int64, error) {
	var rows []eventRow
	if err := tx.Select("id", "memory_id", "version", "delta").
		Where("tenant_id = ? AND delta IS NOT NULL AND created_at < ? AND feed_seq <= ?", tenant, cut, applied).
		Order("memory_id, version").Find(&rows).Error; err != nil {
		return 0, err
	}
	var gone []int64
	var acc *engram.MemoryDelta
	for i := range rows {
		d, err := rows[i].delta()
		if err != nil {
			return 0, err
		}
		inRun := i > 0 && rows[i-1].MemoryID == rows[i].MemoryID && rows[i-1].Version+1 == rows[i].Version
		if inRun {
			gone = append(gone, rows[i-1].ID)
			d.Fold(acc)
		}
		acc = d
		last := i == len(rows)-1 || rows[i+1].MemoryID != rows[i].MemoryID || rows[i+1].Version != rows[i].Version+1
		if last && inRun {
			b, err := json.Marshal(d)
			if err != nil {
				return 0, err
			}
			if string(b) == *rows[i].Delta {
				continue // it already holds what the run changed
			}
			if err := tx.Exec(`UPDATE memory_events SET delta = ? WHERE id = ?`, string(b), rows[i].ID).Error; err != nil {
				return 0, err
			}
		}
	}
	for i := 0; i < len(gone); i += 500 {
		if err := tx.Exec(`DELETE FROM memory_events WHERE id IN ?`, gone[i:min(i+500, len(gone))]).Error; err != nil {
			return 0, err
		}
	}
	return int64(len(gone)), nil
}

// EventLogBytes is the size of the tenant's event log: the bytes of the
// memory states its events record.
func (db *DB) EventLogBytes(ctx context.Context) (int64, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return 0, err
	}
	var n []int64
	size := "COALESCE(" + db.dialect.byteLength("before") + ", 0) + COALESCE(" + db.dialect.byteLength("after") + ", 0) + COALESCE(" +
		db.dialect.byteLength("delta") + ", 0)"
	if err := db.r.WithContext(ctx).Raw(`SELECT COALESCE(SUM(`+size+`), 0) FROM memory_events WHERE tenant_id = ?`, tenant).
		Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("store: event log size: %w", err)
	}
	if len(n) == 0 {
		return 0, nil
	}
	return n[0], nil
}
