package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

type consoleSessionRow struct {
	ID           string `gorm:"primaryKey"`
	KeyID        string
	HomeTenantID string
	TenantID     string
	CSRF         string `gorm:"column:csrf"`
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

func (consoleSessionRow) TableName() string { return "console_sessions" }

// CreateConsoleSession implements engram.ConsoleSessionStore.
func (db *DB) CreateConsoleSession(ctx context.Context, s *engram.ConsoleSession) error {
	g := db.w.WithContext(ctx)
	if err := g.Where("expires_at <= ?", s.CreatedAt.UTC()).Delete(&consoleSessionRow{}).Error; err != nil {
		return fmt.Errorf("store: drop expired console sessions: %w", err)
	}
	row := consoleSessionRow{ID: s.ID, KeyID: s.KeyID, HomeTenantID: s.HomeTenantID, TenantID: s.TenantID,
		CSRF: s.CSRF, CreatedAt: s.CreatedAt.UTC(), ExpiresAt: s.ExpiresAt.UTC()}
	if err := g.Create(&row).Error; err != nil {
		return fmt.Errorf("store: create console session: %w", err)
	}
	return nil
}

// FindConsoleSession implements engram.ConsoleSessionStore. A session
// whose key was revoked is over, on every server at once.
func (db *DB) FindConsoleSession(ctx context.Context, id string, now time.Time) (*engram.ConsoleSession, error) {
	var rows []consoleSessionRow
	err := db.r.WithContext(ctx).Table("console_sessions").Select("console_sessions.*").
		Joins("JOIN api_keys ON api_keys.id = console_sessions.key_id").
		Where("console_sessions.id = ? AND console_sessions.expires_at > ? AND api_keys.revoked_at IS NULL", id, now.UTC()).
		Limit(1).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("store: find console session: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.EUNAUTHORIZED, "no such console session")
	}
	r := rows[0]
	return &engram.ConsoleSession{ID: r.ID, KeyID: r.KeyID, HomeTenantID: r.HomeTenantID, TenantID: r.TenantID,
		CSRF: r.CSRF, CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC()}, nil
}

// SetConsoleTenant implements engram.ConsoleSessionStore.
func (db *DB) SetConsoleTenant(ctx context.Context, id, tenantID string) error {
	res := db.w.WithContext(ctx).Model(&consoleSessionRow{}).Where("id = ?", id).Update("tenant_id", tenantID)
	if res.Error != nil {
		return fmt.Errorf("store: switch console tenant: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return engram.Errorf(engram.ENOTFOUND, "no such console session")
	}
	return nil
}

// DeleteConsoleSession implements engram.ConsoleSessionStore.
func (db *DB) DeleteConsoleSession(ctx context.Context, id string) error {
	if err := db.w.WithContext(ctx).Where("id = ?", id).Delete(&consoleSessionRow{}).Error; err != nil {
		return fmt.Errorf("store: delete console session: %w", err)
	}
	return nil
}

// TenantStats implements engram.ConsoleInsights.
func (db *DB) TenantStats(ctx context.Context, since time.Time) (*engram.TenantStats, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	g := db.r.WithContext(ctx)
	st := &engram.TenantStats{}
	// One pass over the tenant's memories: states, the revision flag and
	// the reward bins (CASE, because the engines floor differently).
	cols := []string{
		"COALESCE(SUM(CASE WHEN valid AND NOT archived THEN 1 ELSE 0 END), 0)",
		"COALESCE(SUM(CASE WHEN valid AND archived THEN 1 ELSE 0 END), 0)",
		"COALESCE(SUM(CASE WHEN NOT valid THEN 1 ELSE 0 END), 0)",
		"COALESCE(SUM(CASE WHEN valid AND NOT archived AND needs_revision THEN 1 ELSE 0 END), 0)",
	}
	for i := range 10 {
		lo := -1 + float64(i)/5
		cond := fmt.Sprintf("reward >= %.1f AND reward < %.1f", lo, lo+0.2)
		switch i {
		case 0:
			cond = fmt.Sprintf("reward < %.1f", lo+0.2)
		case 9:
			cond = fmt.Sprintf("reward >= %.1f", lo)
		}
		cols = append(cols, "COALESCE(SUM(CASE WHEN valid AND NOT archived AND "+cond+" THEN 1 ELSE 0 END), 0)")
	}
	dest := []any{&st.Live, &st.Archived, &st.Tombstoned, &st.NeedsRevision}
	for i := range st.RewardBins {
		dest = append(dest, &st.RewardBins[i])
	}
	if err := g.Raw("SELECT "+strings.Join(cols, ", ")+" FROM memories WHERE tenant_id = ?", tenant).Row().Scan(dest...); err != nil {
		return nil, fmt.Errorf("store: memory stats: %w", err)
	}
	if err := g.Raw(`SELECT category, COUNT(*) AS count FROM memories WHERE tenant_id = ? AND valid AND NOT archived
		GROUP BY category ORDER BY count DESC, category`, tenant).Scan(&st.Categories).Error; err != nil {
		return nil, fmt.Errorf("store: category counts: %w", err)
	}
	if err := g.Table("reflections").Where("tenant_id = ?", tenant).Count(&st.Reflections).Error; err != nil {
		return nil, fmt.Errorf("store: count reflections: %w", err)
	}
	start := since.UTC().Truncate(24 * time.Hour)
	end := db.now().UTC().Truncate(24 * time.Hour)
	for d := start; !d.After(end); d = d.Add(24 * time.Hour) {
		st.Days = append(st.Days, engram.DayVotes{Day: d})
	}
	rows, err := g.Raw(`SELECT signal, created_at FROM feedback WHERE tenant_id = ? AND created_at >= ? AND signal <> 0`,
		tenant, start).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: feedback per day: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var signal float64
		var at time.Time
		if err := rows.Scan(&signal, &at); err != nil {
			return nil, fmt.Errorf("store: feedback per day: %w", err)
		}
		i := int(at.UTC().Sub(start) / (24 * time.Hour))
		if i < 0 || i >= len(st.Days) {
			continue
		}
		if signal > 0 {
			st.Days[i].Up++
		} else {
			st.Days[i].Down++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: feedback per day: %w", err)
	}
	return st, nil
}

// MemoryMovements implements engram.ConsoleInsights.
func (db *DB) MemoryMovements(ctx context.Context, since time.Time, limit int) ([]*engram.MemoryMovement, []*engram.MemoryMovement, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	type agg struct {
		MemoryID string
		Up       int64
		Down     int64
		Capped   int64
		Raters   int64
		Net      float64
	}
	var aggs []agg
	if err := db.r.WithContext(ctx).Raw(`SELECT memory_id,
		SUM(CASE WHEN applied AND signal > 0 THEN 1 ELSE 0 END) AS up,
		SUM(CASE WHEN applied AND signal < 0 THEN 1 ELSE 0 END) AS down,
		SUM(CASE WHEN applied THEN 0 ELSE 1 END) AS capped,
		COUNT(DISTINCT rater) AS raters,
		COALESCE(SUM(CASE WHEN applied THEN signal ELSE 0 END), 0) AS net
		FROM feedback_credits WHERE tenant_id = ? AND created_at >= ? GROUP BY memory_id`,
		tenant, since.UTC()).Scan(&aggs).Error; err != nil {
		return nil, nil, fmt.Errorf("store: memory movements: %w", err)
	}
	var up, down []agg
	for _, a := range aggs {
		switch {
		case a.Net > 0:
			up = append(up, a)
		case a.Net < 0:
			down = append(down, a)
		}
	}
	sortAggs := func(xs []agg, sign float64) []agg {
		slices.SortFunc(xs, func(a, b agg) int {
			if c := cmp.Compare(sign*b.Net, sign*a.Net); c != 0 {
				return c
			}
			return strings.Compare(a.MemoryID, b.MemoryID)
		})
		if len(xs) > limit {
			xs = xs[:limit]
		}
		return xs
	}
	load := func(xs []agg) ([]*engram.MemoryMovement, error) {
		out := make([]*engram.MemoryMovement, 0, len(xs))
		for _, a := range xs {
			row, err := findRow(db.r.WithContext(ctx), tenant, "id = ?", a.MemoryID)
			if err != nil {
				if engram.ErrorCode(err) == engram.ENOTFOUND {
					continue
				}
				return nil, err
			}
			out = append(out, &engram.MemoryMovement{Memory: row.toMemory(), Up: a.Up, Down: a.Down,
				Capped: a.Capped, Raters: a.Raters, Net: a.Net})
		}
		return out, nil
	}
	promoted, err := load(sortAggs(up, 1))
	if err != nil {
		return nil, nil, err
	}
	demoted, err := load(sortAggs(down, -1))
	if err != nil {
		return nil, nil, err
	}
	return promoted, demoted, nil
}

// FindReflectionsCiting implements engram.ConsoleInsights. Citations are
// a JSON list of {id, version}, so the id with its quotes is matched.
func (db *DB) FindReflectionsCiting(ctx context.Context, memoryID string) ([]*engram.Reflection, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(memoryID)
	var rows []reflectionRow
	if err := db.r.WithContext(ctx).Where(`tenant_id = ? AND cited LIKE ? ESCAPE '\'`, tenant, `%"`+like+`"%`).
		Order("seq DESC").Limit(100).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: reflections citing %s: %w", memoryID, err)
	}
	var out []*engram.Reflection
	for i := range rows {
		r := rows[i].toReflection()
		if slices.ContainsFunc(r.Cited, func(c engram.MemoryRef) bool { return c.ID == memoryID }) {
			out = append(out, r)
		}
	}
	return out, nil
}
