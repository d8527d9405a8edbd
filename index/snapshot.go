package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
)

// A snapshot is one tenant's index in a file under Config.Dir, written
// after the tenant was loaded from the store or had applied many changes
// since the last one, so that a cold tenant loads in a fraction of the
// time re-analysing every memory takes. It holds the feed sequence it
// includes; a load applies the changes after it, and falls back to the
// store when the feed no longer has them (the file is a cache of a cache:
// deleting it loses nothing).
//
// Layout: the magic, then unsigned varints — the feed sequence, the
// documents (id, agent, expiry, version, length), the terms (the term,
// its postings as doc deltas, then their frequencies) — and a CRC-32 of
// everything before it. Dead documents are left out and the live ones
// renumbered in their order, which keeps the tie order of scores.
const snapMagic = "engram-index-1\n"

// snapshotEvery: a tenant that applied this many changes since its last
// snapshot (or load) writes a new one, at least snapshotMinChanges.
const (
	snapshotMinDocs    = 5_000
	snapshotMinChanges = 10_000
)

func (ix *Index) snapPath(tenant string) string {
	return filepath.Join(ix.cfg.Dir, tenant+".idx")
}

// encode writes the tenant's live index. The caller holds t.mu.
func (t *tenant) encode() []byte {
	buf := make([]byte, 0, len(snapMagic)+int(t.nPost)*3+len(t.docs)*48)
	buf = append(buf, snapMagic...)
	u := func(x uint64) { buf = binary.AppendUvarint(buf, x) }
	str := func(s string) { u(uint64(len(s))); buf = append(buf, s...) }
	u(uint64(t.seq))
	renum := make([]uint32, len(t.docs))
	u(uint64(t.liveDocs))
	var n uint32
	for d := range t.docs {
		dc := &t.docs[d]
		if !dc.live {
			continue
		}
		renum[d] = n
		n++
		str(dc.id)
		str(dc.agent)
		buf = binary.AppendVarint(buf, dc.expires)
		u(uint64(dc.version))
		u(uint64(t.lens[d]))
	}
	u(uint64(len(t.post)))
	for _, term := range sortedTerms(t.post) {
		p := t.post[term]
		str(term)
		u(uint64(len(p.docs)))
		var prev uint32
		for _, d := range p.docs {
			u(uint64(renum[d] - prev))
			prev = renum[d]
		}
		for i := range p.docs {
			u(uint64(p.tf(i)))
		}
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf))
}

var errSnapshot = errors.New("index: corrupt snapshot")

// decode loads a snapshot into the empty tenant t.
func (t *tenant) decode(b []byte) (err error) {
	if len(b) < len(snapMagic)+4 || string(b[:len(snapMagic)]) != snapMagic ||
		crc32.ChecksumIEEE(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return errSnapshot
	}
	b = b[len(snapMagic) : len(b)-4]
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
		t.byID[dc.id] = uint32(d)
		t.liveDocs++
		t.totalLen += int64(t.lens[d])
		t.strBytes += int64(len(dc.id) + len(dc.agent))
	}
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
func (ix *Index) writeSnapshot(id string, t *tenant) error {
	if err := os.MkdirAll(ix.cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("index: snapshot dir: %w", err)
	}
	tmp, err := os.CreateTemp(ix.cfg.Dir, id+".*.tmp")
	if err != nil {
		return fmt.Errorf("index: write snapshot: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(t.encode()); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("index: write snapshot: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("index: write snapshot: %w", err)
	}
	if err := os.Rename(tmp.Name(), ix.snapPath(id)); err != nil {
		return fmt.Errorf("index: write snapshot: %w", err)
	}
	return nil
}

// readSnapshot loads the tenant's snapshot into the empty t; false when
// there is none or it cannot be used.
func (ix *Index) readSnapshot(id string, t *tenant) bool {
	if ix.cfg.Dir == "" {
		return false
	}
	b, err := os.ReadFile(ix.snapPath(id))
	if err != nil {
		return false
	}
	if err := t.decode(b); err != nil {
		t.reset()
		return false
	}
	return true
}
