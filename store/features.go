package store

import (
	"context"
	"fmt"

	"github.com/engram-memory/engram"
)

// featuresEnd is the first key after every feature key: FeaturePrefix
// with its last byte (':') plus one.
var featuresEnd = engram.FeaturePrefix[:len(engram.FeaturePrefix)-1] + ";"

// FindFeatureEvidence returns the evidence of the tenant's learned
// features (see engram.Memory.Features), the limit with the most evidence
// by feature key (retired ones left out, see engram.RetiredFeatures), and
// the evidence of all features (engram.AllFeatures),
// their reference. EINVALID for a limit outside [1, 1000].
func (db *DB) FindFeatureEvidence(ctx context.Context, limit int) (map[string]engram.Helpfulness, engram.Helpfulness, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, engram.Helpfulness{}, err
	}
	if limit < 1 || limit > 1000 {
		return nil, engram.Helpfulness{}, engram.Errorf(engram.EINVALID, "limit must be in [1, 1000], got %d", limit)
	}
	g := db.r.WithContext(ctx)
	q := g.Where("tenant_id = ? AND memory_id > ? AND memory_id < ? AND memory_id <> ?", tenant,
		engram.FeaturePrefix, featuresEnd, engram.AllFeatures)
	for _, p := range engram.RetiredFeatures {
		q = q.Where("memory_id NOT LIKE ?", p+"%")
	}
	var rows []helpRow
	if err := q.Order("good + bad DESC, memory_id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, engram.Helpfulness{}, fmt.Errorf("store: features: %w", err)
	}
	out := make(map[string]engram.Helpfulness, len(rows))
	for i := range rows {
		out[rows[i].MemoryID] = rows[i].help()
	}
	all, err := loadHelp(g, tenant, []string{engram.AllFeatures}, nil)
	if err != nil {
		return nil, engram.Helpfulness{}, err
	}
	return out, all[engram.AllFeatures], nil
}
