package index

import "hash/maphash"

// idTable finds a document by its memory id: an open-addressing hash
// table of doc numbers over the tenant's docs, which hold the ids. Every
// doc the tenant has seen is in it (a slot is never given up), so it
// indexes docs[:n]. It holds no pointers, which spares the garbage
// collector a million strings at a million memories, and a snapshot load
// fills it in one pass over an array rather than a million map inserts.
type idTable struct {
	seed maphash.Seed
	// slots hold the high 32 bits of an id's hash over its doc number
	// + 1, so a probe reads a doc's id only when the hashes agree; 0 is
	// an empty slot.
	slots []uint64
	n     int // docs in the table
}

// idTableFor returns a table sized for n docs.
func idTableFor(n int) idTable {
	size := 1024
	for size < 2*n {
		size *= 2
	}
	return idTable{seed: maphash.MakeSeed(), slots: make([]uint64, size)}
}

// find returns the doc whose id is id.
func (m *idTable) find(docs []doc, id string) (uint32, bool) {
	if len(m.slots) == 0 {
		return 0, false
	}
	h := maphash.String(m.seed, id)
	mask := uint64(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := m.slots[i]
		if s == 0 {
			return 0, false
		}
		if d := uint32(s) - 1; s>>32 == h>>32 && docs[d].id == id {
			return d, true
		}
	}
}

// add puts doc n, the next, in the table, growing it to keep it at most
// half full; false when its id is already there.
func (m *idTable) add(docs []doc) bool {
	if 2*(m.n+1) > len(m.slots) {
		grown := idTableFor(2 * (m.n + 1))
		for d := range m.n {
			grown.put(docs, uint32(d))
		}
		grown.n = m.n
		*m = grown
	}
	if !m.put(docs, uint32(m.n)) {
		return false
	}
	m.n++
	return true
}

func (m *idTable) put(docs []doc, d uint32) bool {
	id := docs[d].id
	h := maphash.String(m.seed, id)
	mask := uint64(len(m.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := m.slots[i]
		if s == 0 {
			m.slots[i] = h>>32<<32 | uint64(d+1)
			return true
		}
		if s>>32 == h>>32 && docs[uint32(s)-1].id == id {
			return false
		}
	}
}
