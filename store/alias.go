package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

var _ engram.AliasService = (*DB)(nil)

// eventAliasesKey carries, to appendEvent, the aliases an alias or
// unalias write made or removed, for its event's aliases column.
type eventAliasesKey struct{}

// aliasRow is the memory_aliases table.
type aliasRow struct {
	TenantID  string
	UserID    string
	Alias     string
	MemoryID  string
	Version   int64
	CreatedAt time.Time
}

func (aliasRow) TableName() string { return "memory_aliases" }

// toAlias returns the alias of r pointing at target.
func (db *DB) toAlias(r *aliasRow, target *engram.Memory) *engram.Alias {
	return &engram.Alias{Alias: r.Alias, Key: target.Key, MemoryID: r.MemoryID, UserID: r.UserID, Version: r.Version,
		CreatedAt: r.CreatedAt.UTC(), Valid: target.Valid && !target.Expired(db.now())}
}

// findAliasRow returns the alias of user at path, or nil.
func findAliasRow(g *gorm.DB, tenant, user, path string) (*aliasRow, error) {
	var rows []aliasRow
	if err := g.Where("tenant_id = ? AND user_id = ? AND alias = ?", tenant, user, path).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find alias: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &rows[0], nil
}

// keyRow returns the memory user's key path names: the live memory at the
// key, else the target of the user's alias at it, else the (tombstoned)
// memory at the key; ENOTFOUND when there is none.
func keyRow(g *gorm.DB, tenant, user, key string) (*memoryRow, error) {
	row, err := findRow(g, tenant, "key = ? AND user_id = ?", key, user)
	if err == nil && row.Valid || err != nil && engram.ErrorCode(err) != engram.ENOTFOUND {
		return row, err
	}
	a, aerr := findAliasRow(g, tenant, user, key)
	if aerr != nil {
		return nil, aerr
	}
	if a == nil {
		return row, err
	}
	return findRow(g, tenant, "id = ?", a.MemoryID)
}

// aliasPath normalizes an alias or its target key.
func (db *DB) aliasPath(p string) (string, error) {
	return engram.NormalizeKey(p, db.rules.Limits.KeyLimits())
}

// aliasScope returns the tenant and the end user of an alias request.
func aliasScope(ctx context.Context) (tenant, user string, err error) {
	if tenant, err = tenantOf(ctx); err != nil {
		return "", "", err
	}
	user = engram.UserFromContext(ctx)
	return tenant, user, engram.CheckUserID(user)
}

// SetAlias implements engram.AliasService.
func (db *DB) SetAlias(ctx context.Context, alias, key string) (*engram.Alias, error) {
	tenant, user, err := aliasScope(ctx)
	if err != nil {
		return nil, err
	}
	if alias, err = db.aliasPath(alias); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "alias: %s", engram.ErrorMessage(err))
	}
	if key, err = db.aliasPath(key); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "key: %s", engram.ErrorMessage(err))
	}
	if alias == key {
		return nil, engram.Errorf(engram.EINVALID, "an alias cannot point at itself")
	}
	g := db.r.WithContext(ctx)
	target, err := findRow(g, tenant, "key = ? AND user_id = ? AND valid", key, user)
	if engram.ErrorCode(err) == engram.ENOTFOUND {
		if a, aerr := findAliasRow(g, tenant, user, key); aerr != nil {
			return nil, aerr
		} else if a != nil {
			return nil, engram.Errorf(engram.ECONFLICT, "%s is itself an alias: point the alias at the key %s names", key, key)
		}
		return nil, engram.Errorf(engram.ENOTFOUND, "no live key %s", key)
	}
	if err != nil {
		return nil, err
	}
	var out *engram.Alias
	var made []*engram.Alias
	ctx = context.WithValue(ctx, eventAliasesKey{}, &made)
	_, err = db.mutate(ctx, "id = ?", target.ID, nil, engram.ActionAlias, func(tx *gorm.DB, m *engram.Memory) (bool, error) {
		made = nil
		if !m.Valid || m.Key != key || m.Expired(db.now()) {
			return false, engram.Errorf(engram.ENOTFOUND, "no live key %s", key)
		}
		if own, err := findRow(tx, tenant, "key = ? AND user_id = ? AND valid", alias, user); err == nil {
			return false, engram.Errorf(engram.ECONFLICT, "%s is a live key (%s): an alias may not hide it", alias, own.ID)
		} else if engram.ErrorCode(err) != engram.ENOTFOUND {
			return false, err
		}
		have, err := findAliasRow(tx, tenant, user, alias)
		if err != nil {
			return false, err
		}
		if have != nil {
			if have.MemoryID != m.ID {
				return false, engram.Errorf(engram.ECONFLICT, "%s is already an alias of %s: delete it first", alias, have.MemoryID)
			}
			out = db.toAlias(have, m)
			return false, nil
		}
		row := aliasRow{TenantID: tenant, UserID: user, Alias: alias, MemoryID: m.ID, Version: m.Version + 1,
			CreatedAt: db.now().UTC().Truncate(time.Microsecond)}
		if err := tx.Create(&row).Error; err != nil {
			return false, fmt.Errorf("store: create alias: %w", err)
		}
		out = db.toAlias(&row, m)
		made = []*engram.Alias{out}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindAlias implements engram.AliasService.
func (db *DB) FindAlias(ctx context.Context, alias string) (*engram.Alias, error) {
	tenant, user, err := aliasScope(ctx)
	if err != nil {
		return nil, err
	}
	if alias, err = db.aliasPath(alias); err != nil {
		return nil, err
	}
	g := db.r.WithContext(ctx)
	a, err := findAliasRow(g, tenant, user, alias)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, engram.Errorf(engram.ENOTFOUND, "no alias %s", alias)
	}
	target, err := findRow(g, tenant, "id = ?", a.MemoryID)
	if err != nil {
		return nil, err
	}
	return db.toAlias(a, target.toMemory()), nil
}

// DeleteAlias implements engram.AliasService. The alias of a tombstoned
// memory can be removed too.
func (db *DB) DeleteAlias(ctx context.Context, alias string) (*engram.Alias, error) {
	tenant, user, err := aliasScope(ctx)
	if err != nil {
		return nil, err
	}
	if alias, err = db.aliasPath(alias); err != nil {
		return nil, err
	}
	a, err := findAliasRow(db.r.WithContext(ctx), tenant, user, alias)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return nil, engram.Errorf(engram.ENOTFOUND, "no alias %s", alias)
	}
	var out *engram.Alias
	var removed []*engram.Alias
	ctx = context.WithValue(ctx, eventAliasesKey{}, &removed)
	_, err = db.mutate(ctx, "id = ?", a.MemoryID, nil, engram.ActionUnalias, func(tx *gorm.DB, m *engram.Memory) (bool, error) {
		removed = nil
		have, err := findAliasRow(tx, tenant, user, alias)
		if err != nil {
			return false, err
		}
		if have == nil || have.MemoryID != m.ID {
			return false, engram.Errorf(engram.ENOTFOUND, "no alias %s", alias)
		}
		if err := tx.Where("tenant_id = ? AND user_id = ? AND alias = ?", tenant, user, alias).Delete(&aliasRow{}).Error; err != nil {
			return false, fmt.Errorf("store: delete alias: %w", err)
		}
		out = db.toAlias(have, m)
		removed = []*engram.Alias{out}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindAliases implements engram.AliasService.
func (db *DB) FindAliases(ctx context.Context, memoryID string) ([]*engram.Alias, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	g := db.r.WithContext(ctx)
	target, err := findRow(g, tenant, "id = ?", memoryID)
	if err != nil {
		return nil, err
	}
	var rows []aliasRow
	if err := g.Where("tenant_id = ? AND memory_id = ?", tenant, memoryID).Order("created_at, user_id, alias").
		Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find aliases: %w", err)
	}
	m := target.toMemory()
	out := make([]*engram.Alias, len(rows))
	for i := range rows {
		out[i] = db.toAlias(&rows[i], m)
	}
	return out, nil
}
