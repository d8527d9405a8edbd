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
	// contextWeight counts a term of the context (where the memory came
	// from) this many times: it says what the memory answers, not what it
	// is.
	contextWeight = 0.5
	// learnedWeight counts a term of a query the memory answered well
	// (Memory.Learned): evidence from feedback, weaker than the memory's
	// own words.
	learnedWeight = 0.3
	// maxPostings bounds the postings one search reads. The rarest terms
	// are read first; a term so common that it would pass the bound adds
	// little (its IDF is small) and is left out.
	maxPostings = 4_000
	// commonShare: a term in more than this share of the tenant's
	// memories is read only when the query has no rarer term. Its IDF is
	// below ln 2 and its postings are the costliest to read.
	commonShare   = 0.5
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
	for _, t := range analysis.Terms(m.Context) {
		tf[t] += contextWeight
		dl += contextWeight
	}
	for _, t := range analysis.QueryTerms(m.Learned) {
		tf[t] += learnedWeight
		dl += learnedWeight
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

// searchStats are one tenant's collection statistics.
type searchStats struct {
	Docs     int64
	TotalLen float64
}

// termStat is a term's document frequency and IDF in a tenant.
type termStat struct {
	term string
	df   int64
	idf  float64
}

// termStats returns the statistics of the terms the tenant has.
func (db *DB) termStats(g *gorm.DB, tenant string, st searchStats, terms []string) ([]termStat, error) {
	rows, err := g.Raw(`SELECT term, df FROM term_stats WHERE tenant_id = ? AND term IN ? AND df > 0`, tenant, terms).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: search df: %w", err)
	}
	defer rows.Close()
	var out []termStat
	n := float64(st.Docs)
	for rows.Next() {
		var t termStat
		if err := rows.Scan(&t.term, &t.df); err != nil {
			return nil, fmt.Errorf("store: search df: %w", err)
		}
		t.idf = math.Log(1 + (n-float64(t.df)+0.5)/(float64(t.df)+0.5))
		out = append(out, t)
	}
	return out, rows.Err()
}

// pick takes terms in the given order while their postings fit the
// budget and they are in at most share of the tenant's memories; the
// first term is always taken, so a query of common words still finds
// something.
func pick(stats []termStat, st searchStats, budget int64, share float64, limit int) map[string]float64 {
	idf := map[string]float64{}
	var read int64
	for _, t := range stats {
		if len(idf) == limit {
			break
		}
		if len(idf) > 0 && (read+t.df > budget || float64(t.df) > share*float64(st.Docs)) {
			continue
		}
		read += t.df
		idf[t.term] = t.idf
	}
	return idf
}

// accumulate adds weight × BM25 of every term in idf to scores.
func (db *DB) accumulate(g *gorm.DB, tenant string, st searchStats, idf map[string]float64, weight float64, scores map[int64]float64) error {
	if len(idf) == 0 {
		return nil
	}
	terms := make([]string, 0, len(idf))
	for t := range idf {
		terms = append(terms, t)
	}
	// Raw rows, not gorm's reflective Scan: this loop reads up to
	// maxPostings rows and is the hot path of every recall.
	rows, err := g.Raw(`SELECT memory_seq, term, tf, dl FROM memory_terms WHERE tenant_id = ? AND term IN ?`, tenant, terms).Rows()
	if err != nil {
		return fmt.Errorf("store: search postings: %w", err)
	}
	defer rows.Close()
	avgdl := st.TotalLen / float64(st.Docs)
	var (
		seq    int64
		term   string
		tf, dl float64
	)
	for rows.Next() {
		if err := rows.Scan(&seq, &term, &tf, &dl); err != nil {
			return fmt.Errorf("store: search postings: %w", err)
		}
		norm := bm25K1 * (1 - bm25B + bm25B*dl/avgdl)
		scores[seq] += weight * idf[term] * tf * (bm25K1 + 1) / (tf + norm)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: search postings: %w", err)
	}
	return nil
}

type scored struct {
	seq   int64
	score float64
}

// better orders by score, then newer first.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.seq > b.seq
}

// rankScores returns the best k scores, best first. It keeps a min-heap
// of k instead of sorting every match: a common query term matches
// thousands of memories of which a recall reads a few dozen.
func rankScores(scores map[int64]float64, k int) []scored {
	h := make([]scored, 0, k)
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(h) && better(h[m], h[l]) {
				m = l
			}
			if r := l + 1; r < len(h) && better(h[m], h[r]) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for seq, sc := range scores {
		c := scored{seq, sc}
		switch {
		case len(h) < k:
			h = append(h, c)
			for i := len(h) - 1; i > 0 && better(h[(i-1)/2], h[i]); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case better(c, h[0]):
			h[0] = c
			down(0)
		}
	}
	sort.Slice(h, func(i, j int) bool { return better(h[i], h[j]) })
	return h
}

// Pseudo-relevance feedback (RM3-style query expansion): the terms that
// characterise the best first-pass matches are added to the query with a
// small weight, so that memories using the words of the answer rather
// than of the question can still be found.
const (
	prfDocs   = 3   // first-pass matches read
	prfTerms  = 10  // expansion terms added
	prfWeight = 0.3 // weight of an expansion term relative to a query term
	// An expansion term must be informative: in at most prfShare of the
	// tenant's memories, with at most prfPostings postings read for all.
	prfShare    = 0.1
	prfPostings = 2_000
	// prfCandidates bounds the expansion terms whose statistics are read.
	prfCandidates = 256
)

// expand returns the IDF of the expansion terms drawn from the top
// first-pass matches.
func (db *DB) expand(g *gorm.DB, tenant string, st searchStats, ranked []scored, query map[string]float64) (map[string]float64, error) {
	if len(ranked) == 0 {
		return nil, nil
	}
	seqs := make([]int64, 0, prfDocs)
	for _, c := range ranked[:min(prfDocs, len(ranked))] {
		seqs = append(seqs, c.seq)
	}
	// By memory_seq alone: with the tenant in the WHERE clause SQLite
	// prefers scanning the tenant's whole primary-key range. The seqs come
	// from this tenant's postings; the tenant is still checked per row.
	var rows []struct {
		TenantID string
		Term     string
		TF       float64 `gorm:"column:tf"`
	}
	if err := g.Raw(`SELECT tenant_id, term, tf FROM memory_terms WHERE memory_seq IN ?`, seqs).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: expansion terms: %w", err)
	}
	tf := map[string]float64{}
	for _, r := range rows {
		if _, ok := query[r.Term]; !ok && r.TenantID == tenant {
			tf[r.Term] += r.TF
		}
	}
	if len(tf) == 0 {
		return nil, nil
	}
	terms := make([]string, 0, len(tf))
	for t := range tf {
		terms = append(terms, t)
	}
	// Only the most frequent candidates go to the database: a long memory
	// has thousands of distinct terms, more than one statement may bind.
	sort.Slice(terms, func(i, j int) bool {
		return tf[terms[i]] > tf[terms[j]] || tf[terms[i]] == tf[terms[j]] && terms[i] < terms[j]
	})
	terms = terms[:min(len(terms), prfCandidates)]
	stats, err := db.termStats(g, tenant, st, terms)
	if err != nil {
		return nil, err
	}
	sort.Slice(stats, func(i, j int) bool { // most characteristic of the top matches first
		wi, wj := tf[stats[i].term]*stats[i].idf, tf[stats[j].term]*stats[j].idf
		return wi > wj || wi == wj && stats[i].term < stats[j].term
	})
	return pick(stats, st, prfPostings, prfShare, prfTerms), nil
}

// SearchMemories ranks the tenant's live memories against q.Text with
// BM25 whose statistics (document count, average length, document
// frequencies) are the tenant's own, so that no other tenant's data can
// move a score, followed by one round of pseudo-relevance feedback.
// Hits carry their memory without data and source (recall injects text).
// Expired memories and other agents' private memories are left out. Hits
// are best first; Score is the raw score.
func (db *DB) SearchMemories(ctx context.Context, q engram.LexicalQuery) ([]engram.LexicalHit, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	terms := analysis.QueryTerms(q.Text)
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	if len(terms) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	g := db.r.WithContext(ctx)
	var st searchStats
	if err := g.Raw(`SELECT docs, total_len FROM tenant_stats WHERE tenant_id = ?`, tenant).Scan(&st).Error; err != nil {
		return nil, fmt.Errorf("store: search stats: %w", err)
	}
	if st.Docs <= 0 {
		return nil, nil
	}
	stats, err := db.termStats(g, tenant, st, terms)
	if err != nil {
		return nil, err
	}
	sort.Slice(stats, func(i, j int) bool { // rarest first
		return stats[i].df < stats[j].df || stats[i].df == stats[j].df && stats[i].term < stats[j].term
	})
	idf := pick(stats, st, maxPostings, commonShare, maxQueryTerms)
	scores := map[int64]float64{}
	if err := db.accumulate(g, tenant, st, idf, 1, scores); err != nil {
		return nil, err
	}
	if q.Expand {
		more, err := db.expand(g, tenant, st, rankScores(scores, prfDocs), idf)
		if err != nil {
			return nil, err
		}
		if err := db.accumulate(g, tenant, st, more, prfWeight, scores); err != nil {
			return nil, err
		}
	}
	// Rank a margin beyond Limit: some candidates may have expired or be
	// another agent's; the rest are read only if those run out.
	cands := rankScores(scores, 4*q.Limit)
	hits := make([]engram.LexicalHit, 0, q.Limit)
	now := db.now()
	for start := 0; start < len(cands) && len(hits) < q.Limit; {
		end := min(start+q.Limit+q.Limit/4+1, len(cands))
		seqs := make([]int64, 0, end-start)
		for _, c := range cands[start:end] {
			seqs = append(seqs, c.seq)
		}
		rows, err := findLean(g.Where("tenant_id = ? AND seq IN ?", tenant, seqs))
		if err != nil {
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
