package index

import (
	"container/list"
	"sync"

	"github.com/engram-memory/engram"
)

// rowCache keeps the candidate rows (memories without data and source)
// that recent searches of one tenant fetched, the least recently used
// dropped past cap. A row is used only while its version is the one the
// feed last delivered for its memory, so every committed change
// invalidates it without a separate purge; the access count and last
// access time it carries may lag (they change without a version and
// recall does not read them).
type rowCache struct {
	mu    sync.Mutex
	cap   int
	size  int64
	rows  map[uint32]*list.Element
	order *list.List // of *cachedRow, most recently used first
}

type cachedRow struct {
	doc uint32
	m   *engram.Memory
}

func (c *rowCache) init(capacity int) {
	c.cap, c.rows, c.order = capacity, map[uint32]*list.Element{}, list.New()
}

// rowBytes estimates the memory one cached row holds.
func rowBytes(m *engram.Memory) int64 {
	n := 400 + len(m.ID) + len(m.AgentID) + len(m.Key) + len(m.Category) + len(m.Subcategory) + len(m.Type) +
		len(m.Content) + len(m.Summary) + len(m.Context) + len(m.Learned) + len(m.ContentHash) + len(m.SecurityLevel) + len(m.Source)
	for _, t := range m.Tags {
		n += 16 + len(t)
	}
	return int64(n)
}

// get returns doc d's row if it is cached at version.
func (c *rowCache) get(d uint32, version int64) *engram.Memory {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.rows[d]
	if e == nil {
		return nil
	}
	r := e.Value.(*cachedRow)
	if r.m.Version != version {
		c.remove(e)
		return nil
	}
	c.order.MoveToFront(e)
	return r.m
}

// put caches doc d's row m.
func (c *rowCache) put(d uint32, m *engram.Memory) {
	if c.cap < 1 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.rows[d]; e != nil {
		c.remove(e)
	}
	c.rows[d] = c.order.PushFront(&cachedRow{doc: d, m: m})
	c.size += rowBytes(m)
	for c.order.Len() > c.cap {
		c.remove(c.order.Back())
	}
}

func (c *rowCache) remove(e *list.Element) {
	r := e.Value.(*cachedRow)
	c.order.Remove(e)
	delete(c.rows, r.doc)
	c.size -= rowBytes(r.m)
}

func (c *rowCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rows, c.size = map[uint32]*list.Element{}, 0
	c.order.Init()
}

func (c *rowCache) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}
