package store

import (
	"context"
	"fmt"

	"github.com/engram-memory/engram/analysis"
)

// maxQueryTerms bounds the words of a list filter q (FindMemories).
const maxQueryTerms = 64

// BareFTS runs the engine's own ranked full-text query (FTS5 bm25 on
// SQLite, ts_rank on PostgreSQL) for the tenant and returns the number of
// rows. It serves only as the floor that recall latency is compared with
// in `engram bench latency`; recall itself ranks with SearchMemories.
func (db *DB) BareFTS(ctx context.Context, text string, limit int) (int, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return 0, err
	}
	terms := analysis.UniqueTerms(text)
	if len(terms) == 0 {
		return 0, nil
	}
	query, arg := db.dialect.rankedFTS(terms)
	var seqs []int64
	if err := db.r.WithContext(ctx).Raw(query, arg, tenant, limit).Scan(&seqs).Error; err != nil {
		return 0, fmt.Errorf("store: bare fts: %w", err)
	}
	return len(seqs), nil
}
