package index

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
	"github.com/engram-memory/engram/internal/topk"
)

// BM25 parameters: the usual defaults (Robertson & Zaragoza), not tuned
// to any benchmark.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

func idf(n, df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }

// Pseudo-relevance feedback (RM3-style query expansion): the terms that
// characterise the best first-pass matches are added to the query with a
// small weight, so that memories using the words of the answer rather
// than of the question can still be found.
const (
	prfDocs   = 3   // first-pass matches read
	prfTerms  = 10  // expansion terms added
	prfWeight = 0.3 // weight of an expansion term relative to a query term
	// An expansion term must be informative: in at most prfShare of the
	// tenant's memories, the terms together in at most prfPostings
	// postings (the first term excepted). This selects what expands a
	// query; it is not a cost bound.
	prfShare    = 0.1
	prfPostings = 2_000
	// prfCandidates: only the most frequent terms of the top matches are
	// weighed.
	prfCandidates = 256
)

// scratch is a search's score accumulator: a dense score per doc, the
// query weight each doc covers (see queryWeight) and the docs touched, so
// that clearing costs what scoring cost.
type scratch struct {
	scores  []float64
	cover   []float64
	touched []uint32
}

func (ix *Index) getScratch(n int) *scratch {
	s, _ := ix.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.scores) < n {
		s.scores = make([]float64, n)
		s.cover = make([]float64, n)
	}
	return s
}

func (ix *Index) putScratch(s *scratch) {
	for _, d := range s.touched {
		s.scores[d], s.cover[d] = 0, 0
	}
	s.touched = s.touched[:0]
	ix.scratch.Put(s)
}

// accumulate adds weight × BM25 of every posting of the term to the
// scores and, for a term of the query itself (query), the term's IDF to
// the weight each doc covers (see queryWeight). Every contribution is
// positive (IDF > 0), so a zero score marks a doc not yet touched.
//
// Postings of other users' memories (those owned by a user other than
// user) are skipped before any arithmetic, so that they neither cost a
// score nor join the touched documents that top ranks: in a tenant of many
// users a common term's postings are mostly theirs.
//
// When the docs the user may see (the shared ones and the user's) are few
// beside the term's postings, as a common term's are in a tenant of many
// users, each of them is looked up in the postings (binary search)
// instead: the cost follows the user's docs, not the tenant's.
func (t *tenant) accumulate(s *scratch, p *postings, idf, weight float64, query bool, user string) {
	shared, own := t.byUser[""], t.byUser[user]
	if user == "" {
		own = nil
	}
	n := len(shared) + len(own)
	if t.byUser != nil && n == 0 {
		return
	}
	if t.byUser != nil && n*bits.Len(uint(len(p.docs))) < len(p.docs) {
		for _, docs := range [][]uint32{shared, own} {
			for _, d := range docs {
				if i, ok := slices.BinarySearch(p.docs, d); ok {
					t.add(s, p, i, d, idf, weight, query)
				}
			}
		}
		return
	}
	for i, d := range p.docs {
		if u := t.docs[d].user; u != "" && u != user {
			continue
		}
		t.add(s, p, i, d, idf, weight, query)
	}
}

// add adds posting i (doc d) of p to the scores.
func (t *tenant) add(s *scratch, p *postings, i int, d uint32, idf, weight float64, query bool) {
	if s.scores[d] == 0 {
		s.touched = append(s.touched, d)
	}
	s.scores[d] += weight * idf * t.bm25(p, i, d)
	if query {
		s.cover[d] += idf * min(float64(p.tf(i))/10, 1)
	}
}

// bm25 is the BM25 term-frequency part of posting i (doc d) of p: what
// the term adds to d's score per unit of IDF.
func (t *tenant) bm25(p *postings, i int, d uint32) float64 {
	avgdl := float64(t.totalLen) / 10 / float64(t.liveDocs)
	tf := float64(p.tf(i)) / 10
	dl := float64(t.lens[d]) / 10
	norm := bm25K1 * (1 - bm25B + bm25B*dl/avgdl)
	return tf * (bm25K1 + 1) / (tf + norm)
}

// queryWeight is the weight of the query terms that a hit's Match is a
// share of. Match is how much of a query a memory says, the absolute half
// of a recall's relevance (BM25 only ranks: its scale moves with the
// query's length and the tenant's statistics). Each query term weighs its
// IDF in the tenant; a term the tenant has never seen weighs the IDF of a
// term in one memory (as telling as the rarest it knows; the IDF of a term
// in none would outweigh every known term in a young tenant), so that a
// question about something nobody mentioned ("How many moons does Neptune
// have?") is mostly uncovered whatever common words it shares. A memory
// covers a term it holds in its body fully and one only in its context
// (where it came from) or in the queries it answered (Learned) by the
// share of a body occurrence those fields weigh (½, 0.3). Terms that name
// a time weigh nothing (see timeTerm) unless the query has no others, and
// neither does a Chinese or Japanese bigram no memory holds: the query's
// text is cut into overlapping bigrams, and those that straddle two words
// ("我想喝咖啡" → 想喝, 喝咖) are rarely written anywhere, so they say
// nothing about whether the query's subject is known (not tuned: the
// LoCoMo data is English). Match is the covered weight over the query's
// weight, in [0, 1] (0 for a query that weighs nothing); expansion terms
// add to the score, never to Match. It costs one addition per posting the
// query already reads.
func (t *tenant) queryWeight(terms []string, weighs func(string) bool) float64 {
	var w float64
	for _, term := range terms {
		if !weighs(term) {
			continue
		}
		if x, _, ok := t.termIDF(term); ok {
			w += x
		} else if !cjkTerm(term) {
			w += idf(float64(t.liveDocs), 1)
		}
	}
	return w
}

type scored struct {
	doc   uint32
	score float64
}

// newer breaks ties of score: the later doc (the newer memory) first.
func newer(a, b scored) bool { return a.doc > b.doc }

// top returns the best k touched docs that pass keep, best first: a
// common term touches thousands of docs of which a search reads a few
// dozen, and keep is asked only of those that would enter the k.
func top(s *scratch, k int, keep func(uint32) bool) []scored {
	h := topk.New(k, newer)
	for _, d := range s.touched {
		c := scored{d, s.scores[d]}
		if h.Admits(c.score, c) && keep(d) {
			h.Push(c.score, c)
		}
	}
	return h.Sorted()
}

// SearchMemories ranks the live memories of the tenant in ctx against
// q.Text with BM25 over every query term, exactly (no term is skipped for
// being common), whose statistics (document count, average length,
// document frequencies) are the tenant's own, so that no other tenant's
// data can move a score; with q.Concepts, also the members of the
// categories the query names (concepts.go), each hit that holds one
// naming it in Concept; then, with q.Expand, one round of
// pseudo-relevance feedback, from the best matches the reader in ctx may
// read in clear (see feedbackRows). Hits carry their memory without data and
// source; expired memories and other agents' private memories are left
// out. Hits are best first; Score is the raw score. It returns the
// store's error, wrapped, when the index cannot be brought up to date.
func (ix *Index) SearchMemories(ctx context.Context, q engram.LexicalQuery) ([]engram.LexicalHit, error) {
	terms := analysis.QueryTerms(q.Text)
	if len(terms) == 0 || q.Limit <= 0 {
		return nil, nil
	}
	var hits []engram.LexicalHit
	err := ix.read(ctx, func(t *tenant) error {
		if t.liveDocs == 0 {
			return nil
		}
		var err error
		hits, err = ix.search(ctx, t, terms, q)
		return err
	})
	return hits, err
}

func (ix *Index) search(ctx context.Context, t *tenant, terms []string, q engram.LexicalQuery) ([]engram.LexicalHit, error) {
	s := ix.getScratch(len(t.docs))
	defer ix.putScratch(s)
	now := ix.now().UnixNano()
	user := engram.UserFromContext(ctx)
	keep := func(d uint32) bool { return t.visible(d, q.AgentID, user, now) }
	query := make(map[string]bool, len(terms))
	weighs := func(string) bool { return true }
	if slices.ContainsFunc(terms, func(term string) bool { return !timeTerm(term) }) {
		weighs = func(term string) bool { return !timeTerm(term) }
	}
	for _, term := range terms {
		query[term] = true
		if w, p, ok := t.termIDF(term); ok {
			t.accumulate(s, p, w, 1, weighs(term), user)
		}
	}
	var members []conceptMember
	if q.Concepts {
		members = t.expandConcepts(s, q.Text, query, user)
	}
	if len(s.touched) == 0 {
		return nil, nil
	}
	if q.Expand {
		rows, err := ix.feedbackRows(ctx, t, s, keep)
		if err != nil {
			return nil, err
		}
		for _, e := range t.expansion(rows, query) {
			t.accumulate(s, e.p, e.idf, prfWeight, false, user)
		}
	}
	// Rank a margin beyond Limit: a candidate may have changed since the
	// index saw it; the rest are read only if those run out.
	cands := top(s, 4*q.Limit, keep)
	weight := t.queryWeight(terms, weighs)
	hits := make([]engram.LexicalHit, 0, q.Limit)
	now = ix.now().UnixNano()
	for start := 0; start < len(cands) && len(hits) < q.Limit; {
		end := min(start+q.Limit+q.Limit/4+1, len(cands))
		rows, err := ix.rows(ctx, t, cands[start:end])
		if err != nil {
			return nil, err
		}
		for i, c := range cands[start:end] {
			m := rows[i]
			if m == nil || !live(m) || (m.AgentID != "" && m.AgentID != q.AgentID) || !engram.VisibleTo(m.UserID, user) ||
				m.ExpiresAt != nil && m.ExpiresAt.UnixNano() <= now {
				continue
			}
			cp := *m // the cached row is shared; the hit is the caller's
			match := 0.0
			if weight > 0 {
				match = min(1, s.cover[c.doc]/weight)
			}
			hit := engram.LexicalHit{Memory: &cp, Score: c.score, Match: match}
			if members != nil {
				hit.Concept = t.concept(c.doc, members)
			}
			if hits = append(hits, hit); len(hits) == q.Limit {
				break
			}
		}
		start = end
	}
	return hits, nil
}

// rows returns the rows of the docs, in their order (nil where the memory
// is gone), from the row cache or else the store in one statement.
func (ix *Index) rows(ctx context.Context, t *tenant, docs []scored) ([]*engram.Memory, error) {
	out := make([]*engram.Memory, len(docs))
	var missing []string
	at := map[string]int{}
	for i, c := range docs {
		dc := &t.docs[c.doc]
		if m := t.rows.get(c.doc, dc.version); m != nil {
			out[i] = m
			continue
		}
		missing = append(missing, dc.id)
		at[dc.id] = i
	}
	if len(missing) == 0 {
		return out, nil
	}
	ms, err := ix.src.LeanMemories(ctx, missing)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		i, ok := at[m.ID]
		if !ok {
			continue
		}
		out[i] = m
		if d := docs[i].doc; m.Version == t.docs[d].version {
			t.rows.put(d, m)
		}
	}
	return out, nil
}

// maxFeedbackScan bounds how deep feedbackRows looks for matches the
// reader may read (four rounds): past it, the expansion reads what it
// found.
const maxFeedbackScan = 64 * prfDocs

// feedbackRows returns the rows of the first-pass matches that
// pseudo-relevance feedback reads: the prfDocs best that keep passes and,
// when ctx carries a reader (engram.ReaderFromContext), whose security
// level the reader's clearance covers (engram.Cleared). The clearance
// applies to the hits only after the search (clearance.SeeHits), and the
// expansion would carry a withheld memory's words into the query, so that
// the memories it surfaces tell a key what one above its clearance says
// (whether the tenant omits or masks it); so such a memory is passed over
// here as keep passes over other users' and agents' ones, and the next
// best are read in its place. The level is the row's: the docs do not
// hold it. Without a reader (the server's own jobs) nothing changes.
func (ix *Index) feedbackRows(ctx context.Context, t *tenant, s *scratch, keep func(uint32) bool) ([]*engram.Memory, error) {
	r := engram.ReaderFromContext(ctx)
	if r == nil {
		return ix.rows(ctx, t, top(s, prfDocs, keep))
	}
	var out []*engram.Memory
	// top's order is total (ties go to the newer doc), so each round's
	// matches extend the last round's; a round reads only the new ones.
	for k, read := prfDocs, 0; ; k *= 4 {
		first := top(s, k, keep)
		rows, err := ix.rows(ctx, t, first[read:])
		if err != nil {
			return nil, err
		}
		for _, m := range rows {
			if m != nil && !engram.Cleared(r.Clearance, m.SecurityLevel) {
				continue
			}
			if out = append(out, m); len(out) == prfDocs {
				return out, nil
			}
		}
		if len(first) < k || k >= maxFeedbackScan {
			return out, nil
		}
		read = len(first)
	}
}

type expansionTerm struct {
	term string
	idf  float64
	p    *postings
}

// expansion picks the expansion terms from the rows of the best first
// matches, already fetched: their weighted terms, less the query's, the
// most frequent first, then the most characteristic (tf × IDF) that are
// informative enough.
func (t *tenant) expansion(rows []*engram.Memory, query map[string]bool) []expansionTerm {
	tf := map[string]uint32{}
	for _, m := range rows {
		mt, _ := rankTerms(m)
		for term, f := range mt {
			if !query[term] {
				tf[term] += f
			}
		}
	}
	if len(tf) == 0 {
		return nil
	}
	terms := sortedTerms(tf)
	slices.SortStableFunc(terms, func(a, b string) int { return int(tf[b]) - int(tf[a]) })
	terms = terms[:min(len(terms), prfCandidates)]
	cands := make([]expansionTerm, 0, len(terms))
	for _, term := range terms {
		if w, p, ok := t.termIDF(term); ok {
			cands = append(cands, expansionTerm{term, w, p})
		}
	}
	weight := func(e expansionTerm) float64 { return float64(tf[e.term]) * e.idf }
	sort.SliceStable(cands, func(i, j int) bool { // most characteristic of the top matches first
		wi, wj := weight(cands[i]), weight(cands[j])
		return wi > wj || wi == wj && cands[i].term < cands[j].term
	})
	var out []expansionTerm
	var read int
	for _, e := range cands {
		if len(out) == prfTerms {
			break
		}
		df := len(e.p.docs)
		if len(out) > 0 && (read+df > prfPostings || float64(df) > prfShare*float64(t.liveDocs)) {
			continue
		}
		read += df
		out = append(out, e)
	}
	return out
}
