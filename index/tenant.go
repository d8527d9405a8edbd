package index

import (
	"container/list"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// doc is one memory the tenant's index has seen. Its slot (the doc
// number) is kept when the memory dies, so a rollback that revives it
// keeps its place in the tie order; slots are reclaimed by a rebuild.
type doc struct {
	id      string
	agent   string
	user    string // engram.Memory.UserID; "" shared
	expires int64  // unix nanoseconds; 0 never expires
	version int64  // of the memory as the feed last delivered it
	live    bool
}

// postings are one term's documents, ascending, with their weighted term
// frequencies in tenths: six bytes a posting. A frequency past 65,535
// tenths (a word repeated thousands of times in one memory) moves the
// list to four-byte frequencies.
type postings struct {
	docs []uint32
	tfs  []uint16
	wide []uint32 // replaces tfs once a frequency does not fit 16 bits
}

func (p *postings) add(d, tf uint32) {
	i := len(p.docs)
	if i > 0 && p.docs[i-1] >= d {
		i, _ = slices.BinarySearch(p.docs, d)
	}
	p.docs = slices.Insert(p.docs, i, d)
	if p.wide == nil && tf > 0xffff {
		p.widen()
	}
	if p.wide != nil {
		p.wide = slices.Insert(p.wide, i, tf)
	} else {
		p.tfs = slices.Insert(p.tfs, i, uint16(tf))
	}
}

// widen moves p's frequencies from 16 to 32 bits, for one that does not
// fit in 16.
func (p *postings) widen() {
	p.wide = make([]uint32, len(p.tfs))
	for j, x := range p.tfs {
		p.wide[j] = uint32(x)
	}
	p.tfs = nil
}

func (p *postings) remove(d uint32) bool {
	i, ok := slices.BinarySearch(p.docs, d)
	if !ok {
		return false
	}
	p.docs = slices.Delete(p.docs, i, i+1)
	if p.wide != nil {
		p.wide = slices.Delete(p.wide, i, i+1)
	} else {
		p.tfs = slices.Delete(p.tfs, i, i+1)
	}
	return true
}

// set changes doc d's frequency to tf, adding the posting when d has
// none; it reports whether it added one.
func (p *postings) set(d, tf uint32) bool {
	i, ok := slices.BinarySearch(p.docs, d)
	if !ok {
		p.add(d, tf)
		return true
	}
	if p.wide == nil && tf > 0xffff {
		p.widen()
	}
	if p.wide != nil {
		p.wide[i] = tf
	} else {
		p.tfs[i] = uint16(tf)
	}
	return false
}

func (p *postings) tf(i int) uint32 {
	if p.wide != nil {
		return p.wide[i]
	}
	return uint32(p.tfs[i])
}

// tenant is one tenant's index: its documents, postings and statistics,
// and its place in the change feed. mu guards all of it: a search holds
// it for reading, loading and applying changes for writing. evicted is
// set, under mu, when the index is dropped, so a caller that waited on mu
// starts over.
type tenant struct {
	mu       sync.RWMutex
	loaded   bool
	evicted  bool
	seq      int64     // last feed sequence applied
	snapSeq  int64     // the feed sequence of its snapshot file, 0 for none
	syncedAt time.Time // when the last read of the feed started
	elem     *list.Element

	docs []doc
	lens []uint32 // weighted length of each doc, in tenths; 0 when not live
	byID idTable  // of docs
	post map[string]*postings
	// byUser lists the docs of each end user, "" the shared ones (see
	// accumulate): a user's search looks its few docs up in a common
	// term's postings instead of reading every other user's.
	byUser   map[string][]uint32
	liveDocs int64
	totalLen int64 // sum of lens
	nPost    int64 // postings held
	strBytes int64 // bytes of ids, agents and terms held

	bytes atomic.Int64 // estimated memory, refreshed after each sync
	big   atomic.Bool  // holds a snapshot file's worth of memories (see bound), refreshed after each sync
	rows  rowCache
}

func newTenant(rowCap int) *tenant {
	t := &tenant{post: map[string]*postings{}}
	t.rows.init(rowCap)
	return t
}

// reset empties the index before a load.
func (t *tenant) reset() {
	t.loaded, t.seq, t.snapSeq, t.syncedAt = false, 0, 0, time.Time{}
	t.docs, t.lens, t.byID, t.post, t.byUser = nil, nil, idTable{}, map[string]*postings{}, nil
	t.liveDocs, t.totalLen, t.nPost, t.strBytes = 0, 0, 0, 0
	t.rows.clear()
}

// Estimated sizes of the structures a tenant holds, in bytes: Go's map
// and slice overheads, measured roughly; the bound they enforce is a
// budget, not an exact count.
const (
	docBytes     = 64 + 4 + 24 + 4 // doc, its length, its byID slots and its byUser entry
	termBytes    = 150             // map entry, postings header, and its two smallest slices (BenchmarkSmallTenant: the heap of a 100-memory tenant)
	postingBytes = 6
	userBytes    = 80 // a byUser entry: map slot and slice header (its docs are in docBytes)
)

func (t *tenant) estimate() int64 {
	return int64(len(t.docs))*docBytes + int64(len(t.post))*termBytes + t.nPost*postingBytes + t.strBytes + t.rows.bytes() +
		int64(len(t.byUser))*userBytes
}

// put indexes m (live) as doc d, or re-indexes d after a change.
func (t *tenant) put(m *engram.Memory) {
	d, ok := t.byID.find(t.docs, m.ID)
	if !ok {
		d = uint32(len(t.docs))
		t.docs = append(t.docs, doc{id: m.ID})
		t.lens = append(t.lens, 0)
		t.byID.add(t.docs)
		t.strBytes += int64(len(m.ID))
	}
	dc := &t.docs[d]
	t.strBytes += int64(len(m.AgentID) - len(dc.agent) + len(m.UserID) - len(dc.user))
	if !ok || dc.user != m.UserID {
		t.moveUser(d, dc.user, m.UserID, ok)
	}
	dc.agent, dc.user, dc.version, dc.expires = m.AgentID, m.UserID, m.Version, 0
	if m.ExpiresAt != nil {
		dc.expires = m.ExpiresAt.UnixNano()
	}
	tf, dl := rankTerms(m)
	if tf == nil {
		return
	}
	dc.live = true
	t.lens[d] = dl
	t.liveDocs++
	t.totalLen += int64(dl)
	for term, f := range tf {
		p := t.post[term]
		if p == nil {
			p = &postings{}
			t.post[term] = p
			t.strBytes += int64(len(term))
		}
		p.add(d, f)
		t.nPost++
	}
}

// moveUser lists doc d under user to, and (known) no longer under from.
func (t *tenant) moveUser(d uint32, from, to string, known bool) {
	if t.byUser == nil {
		t.byUser = map[string][]uint32{}
	}
	if known {
		if l := t.byUser[from]; len(l) > 0 {
			if i := slices.Index(l, d); i >= 0 {
				t.byUser[from] = slices.Delete(l, i, i+1)
			}
		}
	}
	t.byUser[to] = append(t.byUser[to], d)
}

// indexUsers builds byUser from the docs, after a snapshot load.
func (t *tenant) indexUsers() {
	t.byUser = map[string][]uint32{}
	for d := range t.docs {
		u := t.docs[d].user
		t.byUser[u] = append(t.byUser[u], uint32(d))
	}
}

// drop removes doc d's postings, found from m, the memory as indexed.
func (t *tenant) drop(d uint32, m *engram.Memory) {
	dc := &t.docs[d]
	if !dc.live {
		return
	}
	tf, _ := rankTerms(m)
	for term := range tf {
		p := t.post[term]
		if p == nil || !p.remove(d) {
			continue
		}
		t.nPost--
		if len(p.docs) == 0 {
			delete(t.post, term)
			t.strBytes -= int64(len(term))
		}
	}
	dc.live = false
	t.liveDocs--
	t.totalLen -= int64(t.lens[d])
	t.lens[d] = 0
}

// apply brings the index from a change's before to its after. A change
// that leaves the indexed text alone (feedback, access, a new expiry)
// touches the document's metadata only; a feedback credit (a delta) moves
// the version, which retires the cached row, and re-indexes the learned
// queries when they changed.
func (t *tenant) apply(c *engram.Change) {
	d, known := t.byID.find(t.docs, c.MemoryID)
	if c.Delta != nil {
		if known {
			t.docs[d].version = c.Version
			if l := c.Delta.Learned; l != nil && t.docs[d].live {
				t.relearn(d, l.From, l.To)
			}
		}
		return
	}
	if known && t.docs[d].live && live(c.Before) && live(c.After) && sameText(c.Before, c.After) {
		dc := &t.docs[d]
		t.strBytes += int64(len(c.After.AgentID) - len(dc.agent) + len(c.After.UserID) - len(dc.user))
		if dc.user != c.After.UserID {
			t.moveUser(d, dc.user, c.After.UserID, true)
		}
		dc.agent, dc.user, dc.version, dc.expires = c.After.AgentID, c.After.UserID, c.After.Version, 0
		if c.After.ExpiresAt != nil {
			dc.expires = c.After.ExpiresAt.UnixNano()
		}
		return
	}
	if known && c.Before != nil {
		t.drop(d, c.Before)
	}
	if c.After != nil {
		t.put(c.After)
	} else if known {
		t.docs[d].version = c.Version
	}
}

// relearn re-indexes live doc d's learned queries from to to: each term's
// frequency moves by the learned weight of its difference, so the doc's
// postings and length are those rankTerms gives the memory after.
func (t *tenant) relearn(d uint32, from, to string) {
	diff := map[string]int64{}
	for _, term := range analysis.QueryTerms(from) {
		diff[term] -= learnedWeight
	}
	for _, term := range analysis.QueryTerms(to) {
		diff[term] += learnedWeight
	}
	for term, dt := range diff {
		if dt == 0 {
			continue
		}
		p := t.post[term]
		if p == nil {
			p = &postings{}
			t.post[term] = p
			t.strBytes += int64(len(term))
		}
		var tf int64
		if i, ok := slices.BinarySearch(p.docs, d); ok {
			tf = int64(p.tf(i))
		}
		switch next := tf + dt; {
		case next <= 0:
			if p.remove(d) {
				t.nPost--
			}
			if len(p.docs) == 0 {
				delete(t.post, term)
				t.strBytes -= int64(len(term))
			}
		case p.set(d, uint32(next)):
			t.nPost++
		}
		t.lens[d] = uint32(int64(t.lens[d]) + dt)
		t.totalLen += dt
	}
}

// visible reports whether doc d may be recalled by agent for user at now.
func (t *tenant) visible(d uint32, agent, user string, now int64) bool {
	dc := &t.docs[d]
	return dc.live && (dc.agent == "" || dc.agent == agent) && (dc.user == "" || dc.user == user) &&
		(dc.expires == 0 || dc.expires > now)
}

// termIDF returns the BM25 IDF of a term the tenant has, and false when it
// has none.
func (t *tenant) termIDF(term string) (float64, *postings, bool) {
	p := t.post[term]
	if p == nil || len(p.docs) == 0 {
		return 0, nil, false
	}
	return idf(float64(t.liveDocs), float64(len(p.docs))), p, true
}

// sortedTerms returns the terms of tf in sorted order (for stable output).
func sortedTerms[V any](tf map[string]V) []string {
	out := make([]string, 0, len(tf))
	for t := range tf {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
