package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/topk"
)

// Defaults of the vector cache (Options.VectorCacheBytes and
// Options.VectorCacheTTL).
const (
	DefaultVectorCacheBytes = 256 << 20
	DefaultVectorCacheTTL   = time.Second
)

const (
	// fullEvery × ttl is how old a set's last whole read may be (a
	// minute at the default ttl).
	fullEvery = 60
	// clockSlack is how far a partial read reaches back before the last
	// read began: the clocks of the servers sharing a database, and the
	// time between a vector's saved_at and its commit.
	clockSlack = 5 * time.Second
)

// vectorCache keeps each tenant's vectors of one model in memory, so that
// a hybrid recall scores them without reading every vector from the store
// (113 ms a search at 10,000 vectors of 512 dimensions on SQLite,
// BenchmarkVectorSearch). A tenant's set is read whole on its first
// search; once it is older than ttl, the next search reads the vectors
// saved since the last read (each vector records when it was saved,
// memory_vectors.saved_at), and once its whole read is older than
// fullEvery × ttl, the set is read whole again. SaveVector in this
// process puts its vector into a loaded set at once (a set being read
// meanwhile is read again at its next search), so this server's own
// writes are seen exactly and another server's (or an import's) within
// ttl, as the embeddings follower's poll already lets new text wait for
// its vector. A set holds the vectors of live memories (valid, not
// archived) with their agent and user, so that a search ranks only what
// it may return: a change of a memory's agent, user, validity or archived
// flag stamps its vector's saved_at (mutateTx), so partial reads move or
// drop it too. What a partial read cannot see waits for the next whole
// one: vectors deleted with their memories (ForgetUser, ResetTenant) and
// memories that expired keep their places in the shortlist (VectorSearch
// reads the memories it returns from the store, so they never come
// back), and a vector saved by a server whose clock runs more than
// clockSlack behind is missed. This server's drop (ForgetUser,
// ResetTenant, an import) empties the tenant's sets at once, and a read
// that began before it is read whole again. The least recently searched
// sets go first once the sets hold more than max bytes.
type vectorCache struct {
	ttl time.Duration
	max int64
	now engram.Clock

	mu    sync.Mutex
	bytes int64
	sets  map[vectorKey]*vectorSet
	// saves counts this process's saves per set: a set read while one
	// of its own happened may have missed it, and is read again at its
	// next search.
	saves map[vectorKey]int64
	// drops counts drop per tenant: a set whose read began before one is
	// read whole again at its next search.
	drops map[string]int64
}

type vectorKey struct{ tenant, model string }

// vectorSet is one tenant's vectors of one model; its own lock guards
// its entries against SaveVector while a search scores them.
type vectorSet struct {
	loaded, full, used time.Time // the last read, the last whole read, the last search
	bytes              int64     // guarded by the cache's lock

	mu   sync.RWMutex
	at   map[int64]int // memory seq → index in entries
	rows []cachedVector
}

type cachedVector struct {
	seq         int64
	agent, user string
	vec         []float32 // normalised
}

func newVectorCache(max int64, ttl time.Duration, now engram.Clock) *vectorCache {
	return &vectorCache{ttl: ttl, max: max, now: now, sets: map[vectorKey]*vectorSet{}, saves: map[vectorKey]int64{}, drops: map[string]int64{}}
}

// set returns the tenant's vectors of model, read from the store when
// missing or older than the cache's ttl: whole, or only what was saved
// since the last read while the last whole read is recent.
func (c *vectorCache) set(ctx context.Context, db *DB, tenant, model string) (*vectorSet, error) {
	k := vectorKey{tenant, model}
	now := c.now()
	c.mu.Lock()
	s := c.sets[k]
	if s != nil && now.Sub(s.loaded) < c.ttl {
		s.used = now
		c.mu.Unlock()
		return s, nil
	}
	saves, drops := c.saves[k], c.drops[tenant]
	partial := s != nil && now.Sub(s.full) < fullEvery*c.ttl
	var since int64
	if partial {
		since = s.loaded.Add(-clockSlack).UnixMilli()
	}
	c.mu.Unlock()
	if partial {
		rows, err := readVectors(ctx, db, tenant, model, since)
		if err != nil {
			return nil, err
		}
		grown := s.merge(rows)
		c.mu.Lock()
		defer c.mu.Unlock()
		s.bytes += grown
		if c.sets[k] == s {
			c.bytes += grown
			c.evict(k)
		}
		if c.saves[k] == saves { // else read again at the next search
			s.loaded = now
		}
		s.used = now
		return s, nil
	}
	s, err := loadVectors(ctx, db, tenant, model)
	if err != nil {
		return nil, err
	}
	s.loaded, s.full, s.used = now, now, now
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.saves[k] != saves || c.drops[tenant] != drops {
		s.loaded, s.full = time.Time{}, time.Time{}
	}
	if old := c.sets[k]; old != nil {
		c.bytes -= old.bytes
	}
	c.sets[k] = s
	c.bytes += s.bytes
	c.evict(k)
	return s, nil
}

// evict drops the least recently searched sets but keep while the sets
// hold more than max bytes. The caller holds the cache's lock.
func (c *vectorCache) evict(keep vectorKey) {
	for c.bytes > c.max && len(c.sets) > 1 {
		var oldest vectorKey
		var t time.Time
		for key, o := range c.sets {
			if key != keep && (t.IsZero() || o.used.Before(t)) {
				oldest, t = key, o.used
			}
		}
		c.bytes -= c.sets[oldest].bytes
		delete(c.sets, oldest)
	}
}

// saved puts a vector this process saved into its tenant's loaded set.
func (c *vectorCache) saved(tenant, model string, row cachedVector) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := vectorKey{tenant, model}
	c.saves[k]++
	s := c.sets[k]
	if s == nil {
		return
	}
	grown := s.merge([]liveVector{{row, true}})
	s.bytes += grown
	c.bytes += grown
}

// drop forgets the tenant's sets, so that its next search reads them
// whole: after this process deleted vectors (ForgetUser, ResetTenant),
// which a partial read would not see go, or imported them.
func (c *vectorCache) drop(tenant string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drops[tenant]++
	for k, s := range c.sets {
		if k.tenant == tenant {
			c.bytes -= s.bytes
			delete(c.sets, k)
		}
	}
}

// liveVector is a vector read from the store with whether its memory is
// live (valid, not archived).
type liveVector struct {
	cachedVector
	live bool
}

// merge puts rows into the set: a live memory's vector in its place or
// at the end, a dead memory's out. It returns how many bytes the set
// grew by (negative when it shrank).
func (s *vectorSet) merge(rows []liveVector) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var grown int64
	for _, r := range rows {
		i, ok := s.at[r.seq]
		switch {
		case r.live && ok:
			grown += rowBytes(r.vec) - rowBytes(s.rows[i].vec)
			s.rows[i] = r.cachedVector
		case r.live:
			s.at[r.seq] = len(s.rows)
			s.rows = append(s.rows, r.cachedVector)
			grown += rowBytes(r.vec)
		case ok:
			grown -= rowBytes(s.rows[i].vec)
			last := len(s.rows) - 1
			s.rows[i] = s.rows[last]
			s.at[s.rows[i].seq] = i
			s.rows = s.rows[:last]
			delete(s.at, r.seq)
		}
	}
	return grown
}

// rowBytes is what one cached vector holds, roughly.
func rowBytes(vec []float32) int64 { return int64(4*len(vec)) + 64 }

// best returns the k vectors of the set nearest q (cosine, best first,
// newer first among equal scores) among those of q's length that agent
// and user may see (their own and the shared ones): other agents' and
// users' vectors are left out before ranking, so that they cannot crowd
// out what the search may return.
func (s *vectorSet) best(q []float32, agent, user string, k int) []scored {
	h := topk.New(k, func(a, b scored) bool { return a.seq > b.seq })
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.rows {
		if len(r.vec) != len(q) || (r.agent != "" && r.agent != agent) || (r.user != "" && r.user != user) {
			continue
		}
		sc := float64(dot32(q, r.vec))
		h.Push(sc, scored{r.seq, sc})
	}
	return h.Sorted()
}

// dot32 is the inner product of two vectors of one length, in four
// running sums (float32 holds a cosine of 512 terms to about 1e-6).
func dot32(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// loadVectors reads the vectors of the tenant's live memories under model.
func loadVectors(ctx context.Context, db *DB, tenant, model string) (*vectorSet, error) {
	rows, err := readVectors(ctx, db, tenant, model, -1)
	if err != nil {
		return nil, err
	}
	s := &vectorSet{at: make(map[int64]int, len(rows))}
	s.bytes = s.merge(rows)
	return s, nil
}

// readVectors reads the tenant's vectors under model saved at or after
// since (unix milliseconds), each with whether its memory is live; with
// since negative, every vector of a live memory.
func readVectors(ctx context.Context, db *DB, tenant, model string, since int64) ([]liveVector, error) {
	q := `SELECT v.memory_seq, m.agent_id, m.user_id, v.vector, CASE WHEN m.valid AND NOT m.archived THEN 1 ELSE 0 END
		FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq WHERE v.tenant_id = ? AND v.model = ?`
	args := []any{tenant, model}
	if since < 0 {
		q += ` AND m.valid AND NOT m.archived`
	} else {
		q += ` AND v.saved_at >= ?`
		args = append(args, since)
	}
	rows, err := db.r.WithContext(ctx).Raw(q, args...).Rows()
	if err != nil {
		return nil, fmt.Errorf("store: load vectors: %w", err)
	}
	defer rows.Close()
	var out []liveVector
	for rows.Next() {
		var (
			r    liveVector
			blob []byte
			live int
		)
		if err := rows.Scan(&r.seq, &r.agent, &r.user, &blob, &live); err != nil {
			return nil, fmt.Errorf("store: load vectors: %w", err)
		}
		r.vec, r.live = decodeVector(blob), live == 1
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: load vectors: %w", err)
	}
	return out, nil
}
