package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

var _ engram.LinkService = (*DB)(nil)

// eventLinksKey carries, to appendEvent, the links a link or unlink write
// made or removed, for its event's links column.
type eventLinksKey struct{}

// linkRow is the memory_links table.
type linkRow struct {
	TenantID  string
	FromID    string
	ToID      string
	Relation  string
	Version   int64
	CreatedAt time.Time
}

func (linkRow) TableName() string { return "memory_links" }

func (r *linkRow) toLink() *engram.Link {
	return &engram.Link{From: r.FromID, To: r.ToID, Relation: r.Relation, Version: r.Version, CreatedAt: r.CreatedAt.UTC()}
}

// liveLinks selects the links of a tenant whose both ends are live (not
// tombstoned) memories, oldest first; where narrows it further.
const liveLinks = `SELECT l.tenant_id, l.from_id, l.to_id, l.relation, l.version, l.created_at
FROM memory_links l
JOIN memories f ON f.tenant_id = l.tenant_id AND f.id = l.from_id
JOIN memories t ON t.tenant_id = l.tenant_id AND t.id = l.to_id
WHERE l.tenant_id = ? AND f.valid AND t.valid AND (%s)
ORDER BY l.created_at, l.from_id, l.to_id, l.relation`

// CreateLink implements engram.LinkService.
func (db *DB) CreateLink(ctx context.Context, l engram.Link) (*engram.Link, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	rel, err := engram.NormalizeRelation(l.Relation)
	if err != nil {
		return nil, err
	}
	if l.From == l.To {
		return nil, engram.Errorf(engram.EINVALID, "a memory cannot link to itself")
	}
	var out *engram.Link
	var made []*engram.Link
	ctx = context.WithValue(ctx, eventLinksKey{}, &made)
	_, err = db.mutate(ctx, "id = ?", l.From, nil, engram.ActionLink, func(tx *gorm.DB, m *engram.Memory) (bool, error) {
		made = nil
		if !m.Valid {
			return false, engram.Errorf(engram.ENOTFOUND, "memory not found")
		}
		to, err := findRow(tx, tenant, "id = ?", l.To)
		if err != nil {
			return false, engram.Errorf(engram.ENOTFOUND, "the memory to link to (%q) is not found", l.To)
		}
		if !to.Valid {
			return false, engram.Errorf(engram.ENOTFOUND, "the memory to link to (%q) is deleted", l.To)
		}
		var have []linkRow
		if err := tx.Where("tenant_id = ? AND from_id = ? AND to_id = ? AND relation = ?", tenant, l.From, l.To, rel).
			Find(&have).Error; err != nil {
			return false, fmt.Errorf("store: find link: %w", err)
		}
		if len(have) > 0 {
			out = have[0].toLink()
			return false, nil
		}
		row := linkRow{TenantID: tenant, FromID: l.From, ToID: l.To, Relation: rel, Version: m.Version + 1,
			CreatedAt: db.now().UTC().Truncate(time.Microsecond)}
		if err := tx.Create(&row).Error; err != nil {
			return false, fmt.Errorf("store: create link: %w", err)
		}
		out = row.toLink()
		made = []*engram.Link{out}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteLink implements engram.LinkService.
func (db *DB) DeleteLink(ctx context.Context, from, to, relation string) ([]*engram.Link, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	q := "tenant_id = ? AND from_id = ? AND to_id = ?"
	args := []any{tenant, from, to}
	if relation != "" {
		rel, err := engram.NormalizeRelation(relation)
		if err != nil {
			return nil, err
		}
		q += " AND relation = ?"
		args = append(args, rel)
	}
	var out []*engram.Link
	ctx = context.WithValue(ctx, eventLinksKey{}, &out)
	_, err = db.mutate(ctx, "id = ?", from, nil, engram.ActionUnlink, func(tx *gorm.DB, m *engram.Memory) (bool, error) {
		out = nil
		if !m.Valid {
			return false, engram.Errorf(engram.ENOTFOUND, "memory not found")
		}
		var have []linkRow
		if err := tx.Where(q, args...).Order("relation").Find(&have).Error; err != nil {
			return false, fmt.Errorf("store: find link: %w", err)
		}
		if len(have) == 0 {
			return false, engram.Errorf(engram.ENOTFOUND, "link not found")
		}
		if err := tx.Where(q, args...).Delete(&linkRow{}).Error; err != nil {
			return false, fmt.Errorf("store: delete link: %w", err)
		}
		out = make([]*engram.Link, len(have))
		for i := range have {
			out[i] = have[i].toLink()
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindLinks implements engram.LinkService. A tombstoned memory has no
// live links.
func (db *DB) FindLinks(ctx context.Context, id string) ([]*engram.Link, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	g := db.r.WithContext(ctx)
	if _, err := findRow(g, tenant, "id = ?", id); err != nil {
		return nil, err
	}
	return findLinks(g, fmt.Sprintf(liveLinks, "l.from_id = ? OR l.to_id = ?"), tenant, id, id)
}

// FindLinksOf implements engram.LinkService.
func (db *DB) FindLinksOf(ctx context.Context, ids []string) ([]*engram.Link, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return findLinks(db.r.WithContext(ctx), fmt.Sprintf(liveLinks, "l.from_id IN ? OR l.to_id IN ?"), tenant, ids, ids)
}

func findLinks(g *gorm.DB, query string, args ...any) ([]*engram.Link, error) {
	var rows []linkRow
	if err := g.Raw(query, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find links: %w", err)
	}
	out := make([]*engram.Link, len(rows))
	for i := range rows {
		out[i] = rows[i].toLink()
	}
	return out, nil
}
