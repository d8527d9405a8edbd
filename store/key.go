package store

import (
	"bytes"
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// SetKey implements engram.MemoryService: set_memory(key, content,
// source). The memory at key is replaced whole (last write wins); "null"
// tombstones it (a no-op on a tombstone, ENOTFOUND on a key never
// written); any other JSON, "{}" included, is valid content. The text
// that is searched and injected is the content itself when it is a JSON
// string, else its "text", "content" or "value" field, else the compact
// JSON. A source lacking required provenance is refused, or stored under
// /untrusted/ when the policy quarantines. Keys are per user: the write
// goes to the key of the context's user ("" the shared key). A key that
// is the user's alias (and no live key) writes the alias's target.
func (db *DB) SetKey(ctx context.Context, w engram.KeyWrite) (*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if key, err := engram.NormalizeKey(w.Key, db.rules.Limits.KeyLimits()); err == nil {
		row, err := keyRow(db.r.WithContext(ctx), tenant, engram.UserFromContext(ctx), key)
		if err != nil && engram.ErrorCode(err) != engram.ENOTFOUND {
			return nil, err
		}
		if err == nil && row.Key != nil && *row.Key != key {
			w.Key = *row.Key
		}
	}
	key, err := db.rules.KeyTarget(w)
	if err != nil {
		return nil, err
	}
	content := bytes.TrimSpace(w.Content)
	if len(content) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "content is required (JSON null tombstones the key)")
	}
	if bytes.Equal(content, []byte("null")) {
		return db.tombstoneKey(ctx, tenant, key, w.ExpectVersion)
	}
	fresh, err := db.rules.KeyMemory(key, content, w)
	if err != nil {
		return nil, err
	}
	user := engram.UserFromContext(ctx)
	fresh.UserID = user
	row, err := findRow(db.r.WithContext(ctx), tenant, "key = ? AND user_id = ?", key, user)
	if engram.ErrorCode(err) == engram.ENOTFOUND {
		if w.ExpectVersion != nil {
			return nil, engram.Errorf(engram.ECONFLICT, "key does not exist at version %d", *w.ExpectVersion)
		}
		res, err := db.CreateMemory(ctx, fresh)
		if engram.ErrorCode(err) != engram.ECONFLICT {
			if err != nil {
				return nil, err
			}
			return res.Memory, nil
		}
		// Lost a race to create the key: replace it.
		if row, err = findRow(db.r.WithContext(ctx), tenant, "key = ? AND user_id = ?", key, user); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	return db.mutate(ctx, "seq = ?", row.Seq, w.ExpectVersion, engram.ActionUpdate, func(_ *gorm.DB, m *engram.Memory) (bool, error) {
		db.rules.ReplaceAtKey(m, fresh, w.AgentID != nil)
		*m = *fresh
		return true, nil
	})
}

func (db *DB) tombstoneKey(ctx context.Context, tenant, key string, expect *int64) (*engram.Memory, error) {
	row, err := findRow(db.r.WithContext(ctx), tenant, "key = ? AND user_id = ?", key, engram.UserFromContext(ctx))
	if err != nil {
		return nil, err
	}
	return db.mutate(ctx, "seq = ?", row.Seq, expect, engram.ActionTombstone, func(_ *gorm.DB, m *engram.Memory) (bool, error) {
		if !m.Valid {
			return false, nil
		}
		m.Valid = false
		return true, nil
	})
}

// FindMemoryByKey implements engram.MemoryService. With a user in the
// context it returns the user's memory at the key, else the shared one;
// at each level a live key comes first, then the target of an alias.
func (db *DB) FindMemoryByKey(ctx context.Context, key string) (*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if key, err = engram.NormalizeKey(key, db.rules.Limits.KeyLimits()); err != nil {
		return nil, err
	}
	// The user's own memory at the key, else the shared one.
	row, err := keyRow(db.r.WithContext(ctx), tenant, engram.UserFromContext(ctx), key)
	if engram.ErrorCode(err) == engram.ENOTFOUND && engram.UserFromContext(ctx) != "" {
		row, err = keyRow(db.r.WithContext(ctx), tenant, "", key)
	}
	if err != nil {
		return nil, err
	}
	m := row.toMemory()
	switch {
	case !m.Valid:
		return nil, engram.Errorf(engram.ENOTFOUND, "key %s is tombstoned", key)
	case m.Expired(db.now()):
		return nil, engram.Errorf(engram.ENOTFOUND, "key %s expired at %s", key, m.ExpiresAt.Format(time.RFC3339))
	}
	return m, nil
}
