package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

type reflectionRow struct {
	Seq         int64 `gorm:"primaryKey;autoIncrement"`
	ID          string
	TenantID    string
	UserID      string
	GroupKey    string
	Category    string
	Title       string
	Version     int64
	Markdown    string
	Cited       string
	Members     string
	Fingerprint string
	Writer      string
	Fallback    string
	TokenCount  int
	UpCount     int64
	DownCount   int64
	CreatedAt   time.Time
}

func (reflectionRow) TableName() string { return "reflections" }

type reflectionVersionRow struct {
	ReflectionID string
	TenantID     string
	Version      int64
	Title        string
	Markdown     string
	Cited        string
	Members      string
	Fingerprint  string
	Writer       string
	Fallback     string
	TokenCount   int
	CreatedAt    time.Time
}

func (reflectionVersionRow) TableName() string { return "reflection_versions" }

func (r *reflectionRow) toReflection() *engram.Reflection {
	out := &engram.Reflection{ID: r.ID, Group: r.GroupKey, Category: r.Category, UserID: r.UserID, Title: r.Title, Version: r.Version,
		Markdown: r.Markdown, Fingerprint: r.Fingerprint, Writer: r.Writer, Fallback: r.Fallback, TokenCount: r.TokenCount,
		UpCount: r.UpCount, DownCount: r.DownCount, CreatedAt: r.CreatedAt.UTC(), Cited: []engram.MemoryRef{}, Members: []engram.MemoryRef{}}
	_ = json.Unmarshal([]byte(r.Cited), &out.Cited)
	_ = json.Unmarshal([]byte(r.Members), &out.Members)
	return out
}

// SaveReflection stores r as the current reflection of its group: a new
// reflection (version 1) or the next version of the group's. When the
// group's reflection already has r's fingerprint nothing is written and
// the stored one comes back with written false. Token count, id, version
// and time are the store's.
func (db *DB) SaveReflection(ctx context.Context, r *engram.Reflection) (*engram.Reflection, bool, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, false, err
	}
	cited, members := mustJSON(r.Cited), mustJSON(r.Members)
	tokens := db.tokens.Count(r.Markdown)
	for attempt := 0; ; attempt++ {
		var out *engram.Reflection
		written := false
		err := db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var cur []reflectionRow
			if err := db.dialect.forUpdate(tx).Where("tenant_id = ? AND group_key = ?", tenant, r.Group).Limit(1).Find(&cur).Error; err != nil {
				return fmt.Errorf("store: find reflection: %w", err)
			}
			if len(cur) == 1 && cur[0].Fingerprint == r.Fingerprint {
				out = cur[0].toReflection()
				return nil
			}
			row := reflectionRow{ID: newID("refl"), TenantID: tenant, UserID: r.UserID, GroupKey: r.Group, Category: r.Category, Title: r.Title,
				Version: 1, Markdown: r.Markdown, Cited: cited, Members: members, Fingerprint: r.Fingerprint, Writer: r.Writer,
				Fallback: r.Fallback, TokenCount: tokens, CreatedAt: db.now().UTC().Truncate(time.Microsecond)}
			if len(cur) == 1 {
				row.Seq, row.ID, row.Version, row.UpCount, row.DownCount = cur[0].Seq, cur[0].ID, cur[0].Version+1, cur[0].UpCount, cur[0].DownCount
				if err := tx.Save(&row).Error; err != nil {
					return fmt.Errorf("store: update reflection: %w", err)
				}
			} else if err := tx.Create(&row).Error; err != nil {
				return fmt.Errorf("store: create reflection: %w", err)
			}
			if err := tx.Create(&reflectionVersionRow{ReflectionID: row.ID, TenantID: tenant, Version: row.Version, Title: row.Title,
				Markdown: row.Markdown, Cited: cited, Members: members, Fingerprint: row.Fingerprint, Writer: row.Writer,
				Fallback: row.Fallback, TokenCount: tokens, CreatedAt: row.CreatedAt}).Error; err != nil {
				return fmt.Errorf("store: save reflection version: %w", err)
			}
			out, written = row.toReflection(), true
			return nil
		})
		switch {
		case err == nil:
			return out, written, nil
		case db.dialect.isTransient(err) && attempt < maxAttempts:
			if err := backoff(ctx, attempt); err != nil {
				return nil, false, err
			}
		case db.dialect.isUniqueViolation(err) && attempt < 3:
			continue // another server wrote the group's reflection first: compare with it
		default:
			return nil, false, err
		}
	}
}

// FindReflectionByID returns the tenant's current reflection with id.
// ENOTFOUND.
func (db *DB) FindReflectionByID(ctx context.Context, id string) (*engram.Reflection, error) {
	return db.findReflection(ctx, "id = ?", id)
}

// FindReflectionByGroup returns the current reflection of a group.
// ENOTFOUND.
func (db *DB) FindReflectionByGroup(ctx context.Context, group string) (*engram.Reflection, error) {
	return db.findReflection(ctx, "group_key = ?", group)
}

func (db *DB) findReflection(ctx context.Context, where string, arg any) (*engram.Reflection, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	var rows []reflectionRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ?", tenant).Where(where, arg).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find reflection: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "reflection not found")
	}
	return rows[0].toReflection(), nil
}

// FindReflectionVersions returns every version of a reflection, oldest
// first. ENOTFOUND.
func (db *DB) FindReflectionVersions(ctx context.Context, id string) ([]*engram.Reflection, error) {
	cur, err := db.FindReflectionByID(ctx, id)
	if err != nil {
		return nil, err
	}
	var rows []reflectionVersionRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ? AND reflection_id = ?", engram.TenantFromContext(ctx), id).
		Order("version").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: reflection versions: %w", err)
	}
	out := make([]*engram.Reflection, len(rows))
	for i, v := range rows {
		row := reflectionRow{ID: id, GroupKey: cur.Group, Category: cur.Category, Title: v.Title, Version: v.Version,
			Markdown: v.Markdown, Cited: v.Cited, Members: v.Members, Fingerprint: v.Fingerprint, Writer: v.Writer,
			Fallback: v.Fallback, TokenCount: v.TokenCount, CreatedAt: v.CreatedAt}
		out[i] = row.toReflection()
	}
	return out, nil
}

// FindReflections returns a page of the tenant's current reflections,
// most recently created groups first.
func (db *DB) FindReflections(ctx context.Context, f engram.ReflectionFilter) (*engram.ReflectionPage, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := db.pageLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	str := func(p *string) string {
		if p == nil {
			return "\x00"
		}
		return *p
	}
	fingerprint := strings.Join([]string{"reflections", tenant, str(f.Category), str(f.UserID), fmt.Sprint(f.Visible)}, "\x1f")
	after, err := db.decodeCursor(f.Cursor, fingerprint)
	if err != nil {
		return nil, err
	}
	q := db.r.WithContext(ctx).Where("tenant_id = ?", tenant)
	if after > 0 {
		q = q.Where("seq < ?", after)
	}
	if f.Category != nil {
		q = q.Where("category = ?", *f.Category)
	}
	if f.UserID != nil {
		q = q.Where("user_id = ?", *f.UserID)
	}
	if f.Visible {
		q = q.Where("user_id IN ('', ?)", engram.UserFromContext(ctx))
	}
	var rows []reflectionRow
	if err := q.Order("seq DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list reflections: %w", err)
	}
	items, next := seqPage(db, rows, limit, fingerprint, func(r *reflectionRow) int64 { return r.Seq }, (*reflectionRow).toReflection)
	return &engram.ReflectionPage{Items: items, NextCursor: next}, nil
}

// EachReflection calls fn with every current reflection of the tenant
// that the context's user may read: the shared ones and that user's,
// never another user's (for recall's L3 layer: a tenant has one per
// group, tens to hundreds).
func (db *DB) EachReflection(ctx context.Context, fn func(*engram.Reflection) error) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	var rows []reflectionRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ? AND user_id IN ('', ?)", tenant, engram.UserFromContext(ctx)).
		Order("seq").Find(&rows).Error; err != nil {
		return fmt.Errorf("store: reflections: %w", err)
	}
	for i := range rows {
		if err := fn(rows[i].toReflection()); err != nil {
			return err
		}
	}
	return nil
}
