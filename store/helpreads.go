package store

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sync"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// helpReads holds the memory_help rows one feedback group has read. A
// group writes memory_help only at its end (groupLearning.write), so in
// its transaction a row read once stays as read: each of the group's
// feedbacks reads it from here, with what its predecessors added (the
// group's pending sums) on top, instead of reading it again. A nil
// *helpReads reads every time.
//
// It also keeps each memory's origin and features, by id: what they are
// made of (its agent, source, type, key, tags, category and content) no
// feedback of the group changes, and computing them was a tenth of a
// feedback's writer time.
type helpReads struct {
	byKey    map[string]*helpRow // a row as read; nil: there is none
	top      *helpRow            // the main origin as read (see mainOrigin)
	readMain bool                // top was read
	kinds    map[string]memoryKinds
}

// memoryKinds is a memory's origin and features (engram.Memory.Origin,
// Features).
type memoryKinds struct {
	origin   string
	features []string
}

func newHelpReads() *helpReads {
	return &helpReads{byKey: map[string]*helpRow{}, kinds: map[string]memoryKinds{}}
}

// kindsOf returns m's origin and features, computed once per c from the
// process's cache (see kindsCache).
func (c *helpReads) kindsOf(m *engram.Memory) memoryKinds {
	if c == nil {
		return processKinds.get(m)
	}
	if k, ok := c.kinds[m.ID]; ok {
		return k
	}
	k := processKinds.get(m)
	c.kinds[m.ID] = k
	return k
}

// kindsCache keeps memories' origins and features by id, with a
// fingerprint of the fields they are computed from (kindsFingerprint):
// every recall reads its candidates' helpfulness by kind, and every
// feedback group its credited memories', and computing the kinds of
// fifty candidates was a twentieth of a server's CPU under load. A credit
// moves a memory's version but none of those fields, so the kinds stay
// cached across feedback. Past kindsCacheMax entries it starts again
// empty.
type kindsCache struct {
	mu sync.Mutex
	m  map[string]cachedKinds
}

type cachedKinds struct {
	fingerprint uint64
	kinds       memoryKinds
}

const kindsCacheMax = 200_000

// processKinds is the process's kindsCache: the kinds are a function of
// a memory's fields, whatever the store or tenant.
var processKinds = &kindsCache{m: map[string]cachedKinds{}}

// kindsSeed seeds kindsFingerprint for the life of the process.
var kindsSeed = maphash.MakeSeed()

// kindsFingerprint hashes what engram.Memory.Origin and Features read: the
// agent, source, type, key, tags and content, each length-prefixed so
// that no two field lists hash alike by shifting a boundary.
func kindsFingerprint(m *engram.Memory) uint64 {
	var h maphash.Hash
	h.SetSeed(kindsSeed)
	field := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.WriteString(s)
	}
	field(m.AgentID)
	field(string(m.Source))
	field(m.Type)
	field(m.Key)
	field(m.Content)
	for _, t := range m.Tags {
		field(t)
	}
	return h.Sum64()
}

func (k *kindsCache) get(m *engram.Memory) memoryKinds {
	fp := kindsFingerprint(m)
	k.mu.Lock()
	c, ok := k.m[m.ID]
	k.mu.Unlock()
	if ok && c.fingerprint == fp {
		return c.kinds
	}
	kinds := memoryKinds{origin: m.Origin(), features: m.Features()}
	k.mu.Lock()
	if len(k.m) >= kindsCacheMax {
		k.m = map[string]cachedKinds{}
	}
	k.m[m.ID] = cachedKinds{fingerprint: fp, kinds: kinds}
	k.mu.Unlock()
	return kinds
}

// rows returns the rows of keys that exist, by key, reading those c has
// not read. The rows may be c's own: read them, never change them.
func (c *helpReads) rows(g *gorm.DB, tenant string, keys []string) (map[string]*helpRow, error) {
	missing := keys
	if c != nil {
		missing = make([]string, 0, len(keys))
		for _, k := range keys {
			if _, ok := c.byKey[k]; !ok {
				missing = append(missing, k)
			}
		}
	}
	var rows []helpRow
	if len(missing) > 0 {
		var err error
		if rows, err = readHelpRows(g, tenant, missing); err != nil {
			return nil, fmt.Errorf("store: helpfulness: %w", err)
		}
	}
	byID := make(map[string]*helpRow, len(keys))
	for i := range rows {
		byID[rows[i].MemoryID] = &rows[i]
	}
	if c == nil {
		return byID, nil
	}
	for _, k := range missing {
		c.byKey[k] = byID[k] // nil: there is none
	}
	for _, k := range keys {
		if r := c.byKey[k]; r != nil {
			byID[k] = r
		}
	}
	return byID, nil
}

// main returns the origin row with the most evidence, good and bad, as
// written (nil when there is none): of the origin rows (keys
// engram.OriginPrefix + hex, a range of the primary key; not AllOrigins).
func (c *helpReads) main(g *gorm.DB, tenant string) (*helpRow, error) {
	if c != nil && c.readMain {
		return c.top, nil
	}
	rows, err := scanHelpRows(g, tenant, `SELECT `+helpColumns+` FROM memory_help
		WHERE tenant_id = ? AND memory_id > ? AND memory_id < ? AND memory_id <> ? ORDER BY good + bad DESC, memory_id LIMIT 1`,
		tenant, engram.OriginPrefix, originsEnd, engram.AllOrigins)
	if err != nil {
		return nil, fmt.Errorf("store: main origin: %w", err)
	}
	var top *helpRow
	if len(rows) == 1 {
		top = &rows[0]
	}
	if c != nil {
		c.top, c.readMain = top, true
	}
	return top, nil
}

// helpColumns are the memory_help columns a read of evidence scans
// (scanHelpRows); updated_at is for people, not for the scores.
const helpColumns = `memory_id, good, bad, with_n, with_sum, with_sq, without_n, without_sum, without_sq`

// readHelpRowsSQL reads the memory_help rows of the keys $2 of the tenant
// $1 on PostgreSQL, one primary-key lookup per key (OFFSET 0 keeps the
// subquery a lookup). As "memory_id = ANY($2)" the planner, going by the
// statistics of a table that feedback had grown since they were taken,
// read all of the tenant's rows through the index on its tenant and
// compared each with every key: 12 to 42 ms a recall once a tenant had
// 5,000 rows, and 5 to 18 ms to plan, against under a millisecond each
// for the lookups.
const readHelpRowsSQL = `SELECT h.memory_id, h.good, h.bad, h.with_n, h.with_sum, h.with_sq, h.without_n, h.without_sum,
	h.without_sq FROM unnest(?::text[]) AS k(id)
CROSS JOIN LATERAL (SELECT * FROM memory_help WHERE tenant_id = ? AND memory_id = k.id OFFSET 0) h`

// readHelpRows reads the memory_help rows of keys: every recall reads its
// candidates' rows.
func readHelpRows(g *gorm.DB, tenant string, keys []string) ([]helpRow, error) {
	in, list := inList(g, "memory_id", keys)
	query, args := `SELECT `+helpColumns+` FROM memory_help WHERE tenant_id = ? AND `+in, []any{tenant, list}
	if g.Dialector.Name() == "postgres" {
		query, args = readHelpRowsSQL, []any{list, tenant}
	}
	return scanHelpRows(g, tenant, query, args...)
}

// scanHelpRows runs query, which selects helpColumns, scanning the
// columns itself: gorm's scan by reflection took as long as the
// statement.
func scanHelpRows(g *gorm.DB, tenant, query string, args ...any) ([]helpRow, error) {
	rs, err := g.Raw(query, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var rows []helpRow
	for rs.Next() {
		r := helpRow{TenantID: tenant}
		if err := rs.Scan(&r.MemoryID, &r.Good, &r.Bad, &r.WithN, &r.WithSum, &r.WithSq, &r.WithoutN, &r.WithoutSum, &r.WithoutSq); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, rs.Err()
}
