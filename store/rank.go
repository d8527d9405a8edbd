package store

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// BM25 parameters: the usual defaults (Robertson & Zaragoza), not tuned
// to any benchmark.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// metaWeight counts a term of the key, tags, type or subcategory
	// this many times: a tag says what a memory is about.
	metaWeight = 2.0
	// maxPostings bounds the postings one search reads. The rarest terms
	// are read first; a term so common that it would pass the bound adds
	// little (its IDF is small) and is left out.
	maxPostings   = 200_000
	maxQueryTerms = 64
)

// rankTerms returns the weighted term frequencies and the weighted
// length of a memory as the ranking index sees it; nil for a memory that
// is not live (tombstoned or archived: never recalled).
func rankTerms(m *engram.Memory) (map[string]float64, float64) {
	if m == nil || !m.Valid || m.Archived {
		return nil, 0
	}
	tf := map[string]float64{}
	var dl float64
	for _, t := range analysis.Terms(m.Content + "\n" + m.Summary) {
		tf[t]++
		dl++
	}
	for _, t := range analysis.Terms(strings.Join(m.Tags, " ") + " " + m.Key + " " + m.Subcategory + " " + m.Type) {
		tf[t] += metaWeight
		dl += metaWeight
	}
	return tf, dl
}

// reindex brings the ranking index of one memory from its state before
// (nil when new) to after, inside the write's transaction. Statistics
// change by deltas, term rows in sorted order, so that concurrent
// writers on PostgreSQL lock rows in one order and cannot deadlock.
func (db *DB) reindex(tx *gorm.DB, tenant string, seq int64, before, after *engram.Memory) error {
	oldTF, oldLen := rankTerms(before)
	newTF, newLen := rankTerms(after)
	if oldTF == nil && newTF == nil {
		return nil
	}
	if oldLen == newLen && sameTF(oldTF, newTF) {
		return nil
	}
	if oldTF != nil {
		if err := tx.Exec(`DELETE FROM memory_terms WHERE memory_seq = ?`, seq).Error; err != nil {
			return fmt.Errorf("store: unindex memory: %w", err)
		}
	}
	delta := map[string]int{}
	for t := range oldTF {
		delta[t]--
	}
	for t := range newTF {
		delta[t]++
	}
	terms := make([]string, 0, len(delta))
	for t, d := range delta {
		if d != 0 {
			terms = append(terms, t)
		}
	}
	sort.Strings(terms)
	const chunk = 500
	for i := 0; i < len(terms); i += chunk {
		part := terms[i:min(i+chunk, len(terms))]
		args := make([]any, 0, 3*len(part))
		for _, t := range part {
			args = append(args, tenant, t, delta[t])
		}
		if err := tx.Exec(`INSERT INTO term_stats (tenant_id, term, df) VALUES `+placeholders(len(part), 3)+
			` ON CONFLICT (tenant_id, term) DO UPDATE SET df = term_stats.df + excluded.df`, args...).Error; err != nil {
			return fmt.Errorf("store: term stats: %w", err)
		}
	}
	if newTF != nil {
		sorted := make([]string, 0, len(newTF))
		for t := range newTF {
			sorted = append(sorted, t)
		}
		sort.Strings(sorted)
		for i := 0; i < len(sorted); i += chunk {
			part := sorted[i:min(i+chunk, len(sorted))]
			args := make([]any, 0, 5*len(part))
			for _, t := range part {
				args = append(args, tenant, t, seq, newTF[t], newLen)
			}
			if err := tx.Exec(`INSERT INTO memory_terms (tenant_id, term, memory_seq, tf, dl) VALUES `+placeholders(len(part), 5), args...).Error; err != nil {
				return fmt.Errorf("store: index memory: %w", err)
			}
		}
	}
	docs := 0
	switch {
	case oldTF == nil:
		docs = 1
	case newTF == nil:
		docs = -1
	}
	if err := tx.Exec(`INSERT INTO tenant_stats (tenant_id, docs, total_len) VALUES (?, ?, ?)
		ON CONFLICT (tenant_id) DO UPDATE SET docs = tenant_stats.docs + excluded.docs, total_len = tenant_stats.total_len + excluded.total_len`,
		tenant, docs, newLen-oldLen).Error; err != nil {
		return fmt.Errorf("store: tenant stats: %w", err)
	}
	return nil
}

func sameTF(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for t, x := range a {
		if b[t] != x {
			return false
		}
	}
	return true
}

// placeholders returns "(?, ?), (?, ?)" for rows of width columns.
func placeholders(rows, width int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
}

// SearchMemories ranks the tenant's live memories against q.Text with
// BM25 whose statistics (document count, average length, document
// frequencies) are the tenant's own, so that no other tenant's data can
// move a score. Expired memories and other agents' private memories are
// left out. Hits are best first; Score is the raw BM25 score.
func (db *DB) SearchMemories(ctx context.Context, q engram.LexicalQuery) ([]engram.LexicalHit, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	terms := analysis.UniqueTerms(q.Text)
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	if len(terms) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	g := db.r.WithContext(ctx)
	var stats struct {
		Docs     int64
		TotalLen float64
	}
	if err := g.Raw(`SELECT docs, total_len FROM tenant_stats WHERE tenant_id = ?`, tenant).Scan(&stats).Error; err != nil {
		return nil, fmt.Errorf("store: search stats: %w", err)
	}
	if stats.Docs <= 0 {
		return nil, nil
	}
	var dfs []struct {
		Term string
		DF   int64 `gorm:"column:df"`
	}
	if err := g.Raw(`SELECT term, df FROM term_stats WHERE tenant_id = ? AND term IN ? AND df > 0`, tenant, terms).Scan(&dfs).Error; err != nil {
		return nil, fmt.Errorf("store: search df: %w", err)
	}
	sort.Slice(dfs, func(i, j int) bool { return dfs[i].DF < dfs[j].DF })
	idf := map[string]float64{}
	var read int64
	var use []string
	for i, d := range dfs {
		if i > 0 && read+d.DF > maxPostings {
			break
		}
		read += d.DF
		n := float64(stats.Docs)
		idf[d.Term] = math.Log(1 + (n-float64(d.DF)+0.5)/(float64(d.DF)+0.5))
		use = append(use, d.Term)
	}
	if len(use) == 0 {
		return nil, nil
	}
	var postings []struct {
		MemorySeq int64
		Term      string
		TF        float64 `gorm:"column:tf"`
		DL        float64 `gorm:"column:dl"`
	}
	if err := g.Raw(`SELECT memory_seq, term, tf, dl FROM memory_terms WHERE tenant_id = ? AND term IN ?`, tenant, use).
		Scan(&postings).Error; err != nil {
		return nil, fmt.Errorf("store: search postings: %w", err)
	}
	avgdl := stats.TotalLen / float64(stats.Docs)
	scores := map[int64]float64{}
	for _, p := range postings {
		norm := bm25K1 * (1 - bm25B + bm25B*p.DL/avgdl)
		scores[p.MemorySeq] += idf[p.Term] * p.TF * (bm25K1 + 1) / (p.TF + norm)
	}
	type cand struct {
		seq   int64
		score float64
	}
	cands := make([]cand, 0, len(scores))
	for seq, s := range scores {
		cands = append(cands, cand{seq, s})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].score != cands[j].score {
			return cands[i].score > cands[j].score
		}
		return cands[i].seq > cands[j].seq // newer first on ties
	})
	// Read a margin beyond Limit: some candidates may have expired or be
	// another agent's.
	hits := make([]engram.LexicalHit, 0, q.Limit)
	now := db.now()
	for start := 0; start < len(cands) && len(hits) < q.Limit; {
		end := min(start+2*q.Limit, len(cands))
		seqs := make([]int64, 0, end-start)
		for _, c := range cands[start:end] {
			seqs = append(seqs, c.seq)
		}
		var rows []memoryRow
		if err := g.Where("tenant_id = ? AND seq IN ?", tenant, seqs).Find(&rows).Error; err != nil {
			return nil, fmt.Errorf("store: search rows: %w", err)
		}
		bySeq := make(map[int64]*memoryRow, len(rows))
		for i := range rows {
			bySeq[rows[i].Seq] = &rows[i]
		}
		for _, c := range cands[start:end] {
			r := bySeq[c.seq]
			if r == nil || !r.Valid || r.Archived || (r.AgentID != "" && r.AgentID != q.AgentID) {
				continue
			}
			m := r.toMemory()
			if m.Expired(now) {
				continue
			}
			if hits = append(hits, engram.LexicalHit{Memory: m, Score: c.score}); len(hits) == q.Limit {
				break
			}
		}
		start = end
	}
	return hits, nil
}
