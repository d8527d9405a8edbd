package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/engram-memory/engram"
)

// SaveVector stores the embedding of a memory's current text under model,
// replacing an older one. The vector is L2-normalised so that search is a
// dot product. ENOTFOUND for a memory outside the tenant.
func (db *DB) SaveVector(ctx context.Context, memoryID, model string, vec []float32) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	if len(vec) == 0 {
		return engram.Errorf(engram.EINVALID, "empty vector")
	}
	row, err := findRow(db.r.WithContext(ctx), tenant, "id = ?", memoryID)
	if err != nil {
		return err
	}
	unit := normalize(vec)
	blob := encodeVector(unit)
	if err := db.retry(ctx, func() error {
		return db.w.WithContext(ctx).Exec(`INSERT INTO memory_vectors (memory_seq, tenant_id, model, dims, vector, saved_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (memory_seq) DO UPDATE SET model = excluded.model, dims = excluded.dims, vector = excluded.vector, saved_at = excluded.saved_at`,
			row.Seq, tenant, model, len(vec), blob, db.now().UnixMilli()).Error
	}); err != nil {
		return fmt.Errorf("store: save vector: %w", err)
	}
	if db.vectors != nil && row.Valid && !row.Archived {
		db.vectors.saved(tenant, model, cachedVector{seq: row.Seq, agent: row.AgentID, user: row.UserID, vec: unit})
	}
	return nil
}

// VectorSearch returns the tenant's live memories closest to vec (cosine
// similarity, best first) among those embedded with model: exact, every
// vector of the tenant the user may see is scored, from the vector cache
// (see vectorCache) or, with the cache off, from the store.
func (db *DB) VectorSearch(ctx context.Context, model string, vec []float32, agentID string, limit int) ([]engram.LexicalHit, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	q := normalize(vec)
	var set *vectorSet
	if db.vectors != nil {
		set, err = db.vectors.set(ctx, db, tenant, model)
	} else { // the cache off: every search reads the tenant's vectors
		set, err = loadVectors(ctx, db, tenant, model)
	}
	if err != nil {
		return nil, err
	}
	cands := set.best(q, agentID, engram.UserFromContext(ctx), 2*limit)
	seqs := make([]int64, len(cands))
	scores := make(map[int64]float64, len(cands))
	for i, c := range cands {
		seqs[i], scores[c.seq] = c.seq, c.score
	}
	in, list := inList(db.r, "seq", seqs)
	mrows, err := findLean(db.r.WithContext(ctx).Where("tenant_id = ? AND "+in, tenant, list))
	if err != nil {
		return nil, fmt.Errorf("store: vector rows: %w", err)
	}
	now := db.now()
	hits := make([]engram.LexicalHit, 0, limit)
	for _, r := range mrows {
		m := r.toMemory()
		if !m.Valid || m.Archived || m.Expired(now) || (m.AgentID != "" && m.AgentID != agentID) ||
			!engram.VisibleTo(m.UserID, engram.UserFromContext(ctx)) {
			continue
		}
		hits = append(hits, engram.LexicalHit{Memory: m, Score: scores[r.Seq]})
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return hits[:min(limit, len(hits))], nil
}

func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

type scored struct {
	seq   int64
	score float64
}
