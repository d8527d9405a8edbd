package store

import (
	"context"
	"database/sql"
	"fmt"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

var _ engram.ChangeFeed = (*DB)(nil)

// sequence numbers the events that this transaction appended (feed_seq
// NULL), in the order they were appended, with the tenant's next feed
// sequence numbers. It is the last step of every write transaction that
// appends events: the UPDATE locks the tenant's row until commit, so a
// tenant's transactions take their numbers in the order they commit and a
// reader never sees number n+1 before n. The lock is taken last, after
// every memory row lock, so it adds no lock cycle.
func (db *DB) sequence(tx *gorm.DB, tenant string) error {
	var n int64
	if err := tx.Raw(`SELECT COUNT(*) FROM memory_events WHERE tenant_id = ? AND feed_seq IS NULL`, tenant).
		Scan(&n).Error; err != nil {
		return fmt.Errorf("store: count new events: %w", err)
	}
	if n == 0 {
		return nil
	}
	var head int64
	if err := tx.Raw(`UPDATE tenants SET feed_seq = feed_seq + ? WHERE id = ? RETURNING feed_seq`, n, tenant).
		Scan(&head).Error; err != nil {
		return fmt.Errorf("store: advance feed: %w", err)
	}
	if err := tx.Exec(`UPDATE memory_events SET feed_seq = r.n + ?
		FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS n FROM memory_events WHERE tenant_id = ? AND feed_seq IS NULL) AS r
		WHERE memory_events.id = r.id`, head-n, tenant).Error; err != nil {
		return fmt.Errorf("store: number events: %w", err)
	}
	return nil
}

// Changes implements engram.ChangeFeed.
func (db *DB) Changes(ctx context.Context, after int64, limit int) ([]*engram.Change, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	var rows []eventRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ? AND feed_seq > ?", tenant, after).
		Order("feed_seq").Limit(max(limit, 1)).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: read changes: %w", err)
	}
	out := make([]*engram.Change, 0, len(rows))
	for i := range rows {
		ev, err := rows[i].toEvent()
		if err != nil {
			return nil, err
		}
		out = append(out, &engram.Change{Seq: *rows[i].FeedSeq, MemoryID: ev.MemoryID, Version: ev.Version,
			Action: ev.Action, Before: ev.Before, After: ev.After, At: ev.CreatedAt})
	}
	return out, nil
}

// EachLive implements engram.ChangeFeed: one read transaction (repeatable
// read on PostgreSQL; SQLite's read transactions are snapshots) holds the
// tenant's feed head and its live memories, a page at a time.
func (db *DB) EachLive(ctx context.Context, fn func(*engram.Memory) error) (int64, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return 0, err
	}
	var head int64
	err = db.r.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(`SELECT feed_seq FROM tenants WHERE id = ?`, tenant).Scan(&head).Error; err != nil {
			return fmt.Errorf("store: feed head: %w", err)
		}
		var after int64
		for {
			var rows []struct {
				Seq      int64
				ID       string
				Category string
				Content  string
				Summary  string
			}
			if err := tx.Raw(`SELECT seq, id, category, content, summary FROM memories
				WHERE tenant_id = ? AND valid AND NOT archived AND seq > ? ORDER BY seq LIMIT 1000`, tenant, after).
				Scan(&rows).Error; err != nil {
				return fmt.Errorf("store: live memories: %w", err)
			}
			for _, r := range rows {
				m := &engram.Memory{ID: r.ID, Category: r.Category, Content: r.Content, Summary: r.Summary, Valid: true}
				if err := fn(m); err != nil {
					return err
				}
				after = r.Seq
			}
			if len(rows) < 1000 {
				return nil
			}
		}
	}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	return head, err
}
