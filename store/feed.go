package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

var _ engram.ChangeFeed = (*DB)(nil)

// pendingEvents are the events one write transaction appends; writeTx
// inserts them, numbered, as the transaction's last step.
type pendingEvents struct{ rows []eventRow }

type pendingKey struct{}

// writeTx runs fn in a write transaction of the tenant whose memory events
// (appendEvent) are collected and inserted at its end with the tenant's
// next feed sequence numbers (appendEvents). The UPDATE that takes the
// numbers locks the tenant's row until commit, so a tenant's transactions
// take their numbers in the order they commit and a reader never sees
// number n+1 before n. The lock is taken last, after every memory row
// lock, so it adds no lock cycle, and it is held only while the events
// are inserted and the transaction commits.
func (db *DB) writeTx(ctx context.Context, tenant string, fn func(ctx context.Context, tx *gorm.DB) error) error {
	return db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		p := &pendingEvents{}
		if err := fn(context.WithValue(ctx, pendingKey{}, p), tx); err != nil {
			return err
		}
		if len(p.rows) == 0 {
			return nil
		}
		return db.appendEvents(ctx, tx, tenant, p.rows)
	})
}

// appendEvents numbers the events and inserts them. On PostgreSQL the
// tenant's row is locked and the events inserted by one statement, so
// every writer of the tenant holds the lock for one statement and the
// commit, not for two round trips to the database and back; SQLite has
// one writer and no row locks.
func (db *DB) appendEvents(ctx context.Context, tx *gorm.DB, tenant string, rows []eventRow) error {
	if db.dialect.name() == "postgres" {
		return appendEventsPostgres(ctx, tx, tenant, rows)
	}
	var head int64
	if err := tx.Raw(`UPDATE tenants SET feed_seq = feed_seq + ? WHERE id = ? RETURNING feed_seq`, len(rows), tenant).
		Scan(&head).Error; err != nil {
		return fmt.Errorf("store: advance feed: %w", err)
	}
	for i := range rows {
		seq := head - int64(len(rows)) + int64(i) + 1
		rows[i].FeedSeq = &seq
	}
	// A row at a time in one prepared statement (see execEach).
	args := make([][]any, len(rows))
	for i, r := range rows {
		args[i] = []any{r.TenantID, r.MemoryID, r.Version, r.Action, r.Before, r.After, r.Delta, r.Actor, r.CreatedAt, r.FeedSeq, r.Links, r.Aliases}
	}
	if _, err := execEach(tx, `INSERT INTO memory_events (tenant_id, memory_id, version, action, before, after, delta, actor, created_at, feed_seq, links, aliases)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args); err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	return nil
}

// appendEventsSQL advances the tenant's feed by $1 and inserts the events
// given as arrays, numbered in array order.
const appendEventsSQL = `WITH head AS (UPDATE tenants SET feed_seq = feed_seq + $1 WHERE id = $2 RETURNING feed_seq)
INSERT INTO memory_events (tenant_id, memory_id, version, action, before, after, delta, actor, created_at, feed_seq, links, aliases)
SELECT $2, e.memory_id, e.version, e.action, e.before::json, e.after::json, e.delta, e.actor::json, e.created_at, head.feed_seq - $1 + e.n, e.links, e.aliases
FROM head, unnest($3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::text[], $12::text[])
	WITH ORDINALITY AS e(memory_id, version, action, before, after, delta, actor, created_at, links, aliases, n)`

func appendEventsPostgres(ctx context.Context, tx *gorm.DB, tenant string, rows []eventRow) error {
	n := len(rows)
	ids, versions, actions := make([]string, n), make([]int64, n), make([]string, n)
	befores, afters, deltas := make([]*string, n), make([]*string, n), make([]*string, n)
	actors, times, links, aliases := make([]string, n), make([]time.Time, n), make([]*string, n), make([]*string, n)
	for i, r := range rows {
		ids[i], versions[i], actions[i] = r.MemoryID, r.Version, r.Action
		befores[i], afters[i], deltas[i], actors[i], times[i], links[i], aliases[i] = r.Before, r.After, r.Delta, r.Actor, r.CreatedAt, r.Links, r.Aliases
	}
	// Through the connection itself: gorm would spread the slices into
	// lists of parameters; the driver sends them as arrays.
	res, err := tx.Statement.ConnPool.ExecContext(ctx, appendEventsSQL, n, tenant, ids, versions, actions, befores, afters, deltas, actors, times, links, aliases)
	if err != nil {
		return fmt.Errorf("store: append events: %w", err)
	}
	if got, err := res.RowsAffected(); err != nil || got != int64(n) {
		return fmt.Errorf("store: append events: %d of %d inserted (%v)", got, n, err)
	}
	return nil
}

// Changes implements engram.ChangeFeed.
func (db *DB) Changes(ctx context.Context, after int64, limit int) ([]*engram.Change, error) {
	return db.readChanges(ctx, after, limit, true)
}

// StateChanges implements engram.ChangeFeed: the events' delta column is
// left unread, so a credit comes as its sequence, memory and version.
func (db *DB) StateChanges(ctx context.Context, after int64, limit int) ([]*engram.Change, error) {
	return db.readChanges(ctx, after, limit, false)
}

// changesSQL reads a page of the tenant's feed; %s is the delta column,
// or NULL when the follower does not want it. The columns are scanned by
// hand: the mirror and the router read every credit of a busy tenant,
// and gorm's scan by reflection took longer than the statement.
const changesSQL = `SELECT id, memory_id, version, action, before, after, %s, links, aliases, created_at, feed_seq
	FROM memory_events WHERE tenant_id = ? AND feed_seq > ? ORDER BY feed_seq LIMIT ?`

func (db *DB) readChanges(ctx context.Context, after int64, limit int, deltas bool) ([]*engram.Change, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	delta := "delta"
	if !deltas {
		delta = "NULL"
	}
	rs, err := db.r.WithContext(ctx).Raw(fmt.Sprintf(changesSQL, delta), tenant, after, max(limit, 1)).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: read changes: %w", err)
	}
	defer rs.Close()
	out := []*engram.Change{}
	for rs.Next() {
		r := eventRow{TenantID: tenant}
		if err := rs.Scan(&r.ID, &r.MemoryID, &r.Version, &r.Action, &r.Before, &r.After, &r.Delta, &r.Links, &r.Aliases,
			&r.CreatedAt, &r.FeedSeq); err != nil {
			return nil, fmt.Errorf("store: read changes: %w", err)
		}
		c, err := r.change()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("store: read changes: %w", err)
	}
	return out, nil
}

// change is the event r as the change feed delivers it.
func (r *eventRow) change() (*engram.Change, error) {
	ev, err := r.states()
	if err != nil {
		return nil, err
	}
	c := &engram.Change{Seq: *r.FeedSeq, MemoryID: ev.MemoryID, Version: ev.Version,
		Action: ev.Action, Before: ev.Before, After: ev.After, Links: ev.Links, Aliases: ev.Aliases, At: ev.CreatedAt}
	if r.Delta != nil {
		if c.Delta, err = r.delta(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// livePage is how many memories EachLive reads per statement.
const livePage = 2000

// EachLive implements engram.ChangeFeed: one read transaction (repeatable
// read on PostgreSQL; SQLite's read transactions are snapshots) holds the
// tenant's feed head and its live memories, a page at a time, oldest
// first. The memories carry every field but data and source.
func (db *DB) EachLive(ctx context.Context, fn func(*engram.Memory) error) (int64, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return 0, err
	}
	var head int64
	err = db.r.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(`SELECT feed_seq FROM tenants WHERE id = ?`, tenant).Find(&head).Error; err != nil {
			return fmt.Errorf("store: feed head: %w", err)
		}
		var after int64
		for {
			rows, err := findLean(tx.Where("tenant_id = ? AND valid AND NOT archived AND seq > ?", tenant, after).
				Order("seq").Limit(livePage))
			if err != nil {
				return fmt.Errorf("store: live memories: %w", err)
			}
			for i := range rows {
				if err := fn(rows[i].toMemory()); err != nil {
					return err
				}
				after = rows[i].Seq
			}
			if len(rows) < livePage {
				return nil
			}
		}
	}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	return head, err
}

// LeanMemories returns the tenant's memories with the given ids, in no
// particular order, without data and source (what recall ranks and
// injects); ids that name no memory of the tenant are left out. Tombstoned,
// archived and expired memories are returned too: the caller decides.
func (db *DB) LeanMemories(ctx context.Context, ids []string) ([]*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	// By id alone (ids are unique across tenants): with the tenant in the
	// WHERE clause SQLite prefers scanning the tenant's index. The tenant
	// is checked per row.
	g := db.r.WithContext(ctx)
	rows, err := findLean(g.Where(inList(g, "id", ids)))
	if err != nil {
		return nil, fmt.Errorf("store: memories by id: %w", err)
	}
	out := make([]*engram.Memory, 0, len(rows))
	for i := range rows {
		if rows[i].TenantID == tenant {
			out = append(out, rows[i].toMemory())
		}
	}
	return out, nil
}

var _ engram.FeedCursors = (*DB)(nil)

// ClaimFeed implements engram.FeedCursors. The candidate is read first and
// leased by a conditional upsert, which only one of several racing servers
// wins; a loser tries the next candidate.
func (db *DB) ClaimFeed(ctx context.Context, consumer, holder string, lease time.Duration) (string, int64, bool, error) {
	for range 5 {
		now := db.now().UTC()
		var cand []struct {
			ID  string
			Seq int64
		}
		if err := db.w.WithContext(ctx).Raw(`SELECT t.id, COALESCE(c.seq, 0) AS seq FROM tenants t
			LEFT JOIN feed_cursors c ON c.tenant_id = t.id AND c.consumer = ?
			WHERE t.feed_seq > COALESCE(c.seq, 0) AND (c.leased_until IS NULL OR c.leased_until < ?)
			ORDER BY t.id LIMIT 1`, consumer, now).Find(&cand).Error; err != nil {
			return "", 0, false, fmt.Errorf("store: find feed work: %w", err)
		}
		if len(cand) == 0 {
			return "", 0, false, nil
		}
		res := db.w.WithContext(ctx).Exec(`INSERT INTO feed_cursors (consumer, tenant_id, seq, holder, leased_until)
			VALUES (?, ?, 0, ?, ?)
			ON CONFLICT (consumer, tenant_id) DO UPDATE SET holder = excluded.holder, leased_until = excluded.leased_until
			WHERE feed_cursors.leased_until IS NULL OR feed_cursors.leased_until < ?`,
			consumer, cand[0].ID, holder, now.Add(lease), now)
		if res.Error != nil {
			return "", 0, false, fmt.Errorf("store: lease feed: %w", res.Error)
		}
		if res.RowsAffected == 1 {
			return cand[0].ID, cand[0].Seq, true, nil
		}
	}
	return "", 0, false, nil
}

// AdvanceFeed implements engram.FeedCursors.
func (db *DB) AdvanceFeed(ctx context.Context, consumer, holder, tenantID string, seq int64) error {
	if err := db.w.WithContext(ctx).Exec(`UPDATE feed_cursors SET seq = ?, holder = '', leased_until = NULL
		WHERE consumer = ? AND tenant_id = ? AND holder = ? AND seq <= ?`, seq, consumer, tenantID, holder, seq).Error; err != nil {
		return fmt.Errorf("store: advance feed cursor: %w", err)
	}
	return nil
}

// RenewFeed implements engram.FeedCursors.
func (db *DB) RenewFeed(ctx context.Context, consumer, holder, tenantID string, lease time.Duration) (bool, error) {
	res := db.w.WithContext(ctx).Exec(`UPDATE feed_cursors SET leased_until = ?
		WHERE consumer = ? AND tenant_id = ? AND holder = ? AND leased_until IS NOT NULL`,
		db.now().UTC().Add(lease), consumer, tenantID, holder)
	if res.Error != nil {
		return false, fmt.Errorf("store: renew feed lease: %w", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ReleaseFeed implements engram.FeedCursors.
func (db *DB) ReleaseFeed(ctx context.Context, consumer, holder string) error {
	if err := db.w.WithContext(ctx).Exec(`UPDATE feed_cursors SET holder = '', leased_until = NULL
		WHERE consumer = ? AND holder = ?`, consumer, holder).Error; err != nil {
		return fmt.Errorf("store: release feed leases: %w", err)
	}
	return nil
}

// FeedLag implements engram.FeedCursors: one pass over the tenants, which
// are few next to their memories.
func (db *DB) FeedLag(ctx context.Context, consumer string) (int64, error) {
	var lag int64
	if err := db.r.WithContext(ctx).Raw(`SELECT CAST(COALESCE(SUM(t.feed_seq - COALESCE(c.seq, 0)), 0) AS BIGINT) FROM tenants t
		LEFT JOIN feed_cursors c ON c.tenant_id = t.id AND c.consumer = ?
		WHERE t.feed_seq > COALESCE(c.seq, 0)`, consumer).Find(&lag).Error; err != nil {
		return 0, fmt.Errorf("store: feed lag: %w", err)
	}
	return lag, nil
}
