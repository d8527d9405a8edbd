package store

import (
	"context"
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
// last is kept. Its "after" is the state the run ended in, so the history
// still answers and a rollback can still go to every version kept. An
// event a change-feed consumer has not yet applied (its cursor is behind)
// is never removed. It returns the number of events removed.
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
		WHERE tenant_id = ? AND action = ? AND created_at < ? AND (feed_seq IS NULL OR feed_seq <= ?)
		AND EXISTS (SELECT 1 FROM memory_events n WHERE n.memory_id = memory_events.memory_id
			AND n.version = memory_events.version + 1 AND n.action = ? AND n.created_at < ?)`,
			tenant, engram.ActionFeedback, cut, applied, engram.ActionFeedback, cut)
		return res.Error
	})
	if res.Error != nil {
		return 0, fmt.Errorf("store: fold feedback events: %w", res.Error)
	}
	return res.RowsAffected, nil
}

// EventLogBytes is the size of the tenant's event log: the bytes of the
// memory states its events record.
func (db *DB) EventLogBytes(ctx context.Context) (int64, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return 0, err
	}
	var n []int64
	size := "COALESCE(" + db.dialect.byteLength("before") + ", 0) + COALESCE(" + db.dialect.byteLength("after") + ", 0)"
	if err := db.r.WithContext(ctx).Raw(`SELECT COALESCE(SUM(`+size+`), 0) FROM memory_events WHERE tenant_id = ?`, tenant).
		Scan(&n).Error; err != nil {
		return 0, fmt.Errorf("store: event log size: %w", err)
	}
	if len(n) == 0 {
		return 0, nil
	}
	return n[0], nil
}
