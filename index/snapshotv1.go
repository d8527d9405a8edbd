package index

import "encoding/binary"

// The first snapshot format, still read so that an index directory
// written by an older engram loads without a rebuild.

// decodeV1 loads a version 1 snapshot (without magic and CRC) into the
// empty tenant t.
func (t *tenant) decodeV1(b []byte) (err error) {
	bad := false
	u := func() uint64 {
		x, k := binary.Uvarint(b)
		if k <= 0 {
			bad, b = true, nil
			return 0
		}
		b = b[k:]
		return x
	}
	str := func() string {
		n := u()
		if n > uint64(len(b)) {
			bad, b = true, nil
			return ""
		}
		s := string(b[:n])
		b = b[n:]
		return s
	}
	t.seq = int64(u())
	ndocs := u()
	if ndocs > uint64(len(b)) {
		return errSnapshot
	}
	t.docs, t.lens = make([]doc, ndocs), make([]uint32, ndocs)
	for d := range t.docs {
		dc := &t.docs[d]
		dc.id, dc.agent, dc.live = str(), str(), true
		x, k := binary.Varint(b)
		if k <= 0 {
			return errSnapshot
		}
		b = b[k:]
		dc.expires, dc.version, t.lens[d] = x, int64(u()), uint32(u())
		if !t.byID.add(t.docs[:d+1]) {
			return errSnapshot
		}
		t.liveDocs++
		t.totalLen += int64(t.lens[d])
		t.strBytes += int64(len(dc.id) + len(dc.agent))
	}
	t.indexUsers()
	nterms := u()
	for range nterms {
		term := str()
		n := u()
		if bad || n > uint64(len(b)) {
			return errSnapshot
		}
		p := &postings{docs: make([]uint32, n)}
		var d uint64
		for i := range p.docs {
			d += u()
			if d >= ndocs {
				return errSnapshot
			}
			p.docs[i] = uint32(d)
		}
		tfs := make([]uint32, n)
		wide := false
		for i := range tfs {
			tfs[i] = uint32(u())
			wide = wide || tfs[i] > 0xffff
		}
		if wide {
			p.wide = tfs
		} else {
			p.tfs = make([]uint16, n)
			for i, x := range tfs {
				p.tfs[i] = uint16(x)
			}
		}
		t.post[term] = p
		t.nPost += int64(n)
		t.strBytes += int64(len(term))
	}
	if bad || len(b) != 0 {
		return errSnapshot
	}
	return nil
}

// writeSnapshot writes the tenant's snapshot atomically (a temporary file
// renamed over the old one). The caller holds t.mu for reading.
