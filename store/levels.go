package store

import (
	"context"
	"fmt"
)

// MemoryLevels returns the security level of each of the tenant's
// memories among ids (deleted ones too: a reflection written from a
// memory keeps its text after the memory is deleted); ids of no memory of
// the tenant are absent.
func (db *DB) MemoryLevels(ctx context.Context, ids []string) (map[string]string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID            string
		SecurityLevel string
	}
	in, list := inList(db.r, "id", ids)
	if err := db.r.WithContext(ctx).Table("memories").Select("id, security_level").
		Where("tenant_id = ? AND "+in, tenant, list).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: memory levels: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = r.SecurityLevel
	}
	return out, nil
}
