package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// A snapshot is one tenant's index in a file under Config.Dir, written
// after the tenant was loaded from the store or had applied many changes
// since the last one, so that a cold tenant loads in a fraction of the
// time re-analysing every memory takes. It holds the feed sequence it
// includes; a load applies the changes after it, and falls back to the
// store when the feed no longer has them (the file is a cache of a cache:
// deleting it loses nothing).
//
// Layout (version 2): the magic, then little-endian columns that decode
// in bulk — a header of counts and sizes; the documents' ids and agents
// as offsets into one block of text each, their expiries, versions and
// lengths; the terms as offsets into one block; for each term where its
// postings start among all postings and where its bytes start; then each
// term's postings as unsigned varints, doc deltas then frequencies — and
// a CRC-32 of everything before it. Offsets into the text blocks are 32
// bits: a tenant whose ids or terms pass 4 GiB writes a file that does
// not load, and loads from the store. The ids, agents and terms of a load
// are substrings of three strings, and the postings of all terms share two
// arrays, so a load makes a handful of allocations rather than a few per
// document and term; the documents and the terms' postings are decoded
// on separate goroutines. Dead documents are left out and the live ones
// renumbered in their order, which keeps the tie order of scores.
//
// Version 3 is version 2 with the documents' users (engram.Memory.UserID)
// as a third text column after the agents, and their size as a ninth
// header field. Version 2 is still read, its documents all shared (it was
// written before memories had users).
//
// Version 1 (varints throughout, one string and one slice per id and
// term) is still read, so an upgrade does not send tenants back to the
// store; the next snapshot is written as version 2.
const (
	snapMagic   = "engram-index-3\n"
	snapMagicV2 = "engram-index-2\n"
	snapMagicV1 = "engram-index-1\n"
)

// snapshotEvery: a tenant that applied this many changes since its last
// snapshot (or load) writes a new one, at least snapshotMinChanges.
const (
	snapshotMinDocs    = 5_000
	snapshotMinChanges = 10_000
)

// snapHeader is the fixed part of a version 2 snapshot after the magic:
// seq, docs, terms, postings, and the bytes of the id, agent, term and
// postings blocks.
const snapHeader = 8 * 8

// snapHeaderV3 adds the bytes of the user block.
const snapHeaderV3 = snapHeader + 8

func (ix *Index) snapPath(tenant string) string {
	return filepath.Join(ix.cfg.Dir, tenant+".idx")
}

// encode writes the tenant's live index. The caller holds t.mu.
func (t *tenant) encode() []byte {
	renum := make([]uint32, len(t.docs))
	live := make([]uint32, 0, t.liveDocs)
	var idBytes, agentBytes, userBytes int
	for d := range t.docs {
		if dc := &t.docs[d]; dc.live {
			renum[d] = uint32(len(live))
			live = append(live, uint32(d))
			idBytes += len(dc.id)
			agentBytes += len(dc.agent)
			userBytes += len(dc.user)
		}
	}
	terms := sortedTerms(t.post)
	var termBytes int
	for _, term := range terms {
		termBytes += len(term)
	}
	// The postings block first, so that its size goes in the header.
	var post []byte
	postOff := make([]uint64, 1, len(terms)+1)
	byteOff := make([]uint64, 1, len(terms)+1)
	for _, term := range terms {
		p := t.post[term]
		var prev uint32
		for _, d := range p.docs {
			post = binary.AppendUvarint(post, uint64(renum[d]-prev))
			prev = renum[d]
		}
		for i := range p.docs {
			post = binary.AppendUvarint(post, uint64(p.tf(i)))
		}
		postOff = append(postOff, postOff[len(postOff)-1]+uint64(len(p.docs)))
		byteOff = append(byteOff, uint64(len(post)))
	}
	n := len(live)
	size := len(snapMagic) + snapHeaderV3 + 3*4*(n+1) + idBytes + agentBytes + userBytes + n*(8+8+4) +
		4*(len(terms)+1) + termBytes + 2*8*(len(terms)+1) + len(post) + 4
	buf := make([]byte, 0, size)
	buf = append(buf, snapMagic...)
	le := binary.LittleEndian
	for _, x := range []uint64{uint64(t.seq), uint64(n), uint64(len(terms)), postOff[len(postOff)-1],
		uint64(idBytes), uint64(agentBytes), uint64(termBytes), uint64(len(post)), uint64(userBytes)} {
		buf = le.AppendUint64(buf, x)
	}
	strs := func(str func(i int) string, count int) {
		var off uint32
		buf = le.AppendUint32(buf, 0)
		for i := range count {
			off += uint32(len(str(i)))
			buf = le.AppendUint32(buf, off)
		}
		for i := range count {
			buf = append(buf, str(i)...)
		}
	}
	strs(func(i int) string { return t.docs[live[i]].id }, n)
	strs(func(i int) string { return t.docs[live[i]].agent }, n)
	strs(func(i int) string { return t.docs[live[i]].user }, n)
	for _, d := range live {
		buf = le.AppendUint64(buf, uint64(t.docs[d].expires))
	}
	for _, d := range live {
		buf = le.AppendUint64(buf, uint64(t.docs[d].version))
	}
	for _, d := range live {
		buf = le.AppendUint32(buf, t.lens[d])
	}
	strs(func(i int) string { return terms[i] }, len(terms))
	for _, x := range postOff {
		buf = le.AppendUint64(buf, x)
	}
	for _, x := range byteOff {
		buf = le.AppendUint64(buf, x)
	}
	buf = append(buf, post...)
	return le.AppendUint32(buf, crc32.ChecksumIEEE(buf))
}

var errSnapshot = errors.New("index: corrupt snapshot")

// decode loads a snapshot of either version into the empty tenant t.
func (t *tenant) decode(b []byte) error {
	if len(b) < len(snapMagic)+4 || crc32.ChecksumIEEE(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return errSnapshot
	}
	switch string(b[:len(snapMagic)]) {
	case snapMagic:
		return t.decodeV2(b[len(snapMagic):len(b)-4], true)
	case snapMagicV2:
		return t.decodeV2(b[len(snapMagicV2):len(b)-4], false)
	case snapMagicV1:
		return t.decodeV1(b[len(snapMagicV1) : len(b)-4])
	}
	return errSnapshot
}

// snapReader cuts a version 2 snapshot into its columns; any cut past the
// end marks it bad.
type snapReader struct {
	b   []byte
	bad bool
}

func (r *snapReader) take(n uint64) []byte {
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// strings returns count offsets and their block as one string; the
// offsets must rise within the block.
func (r *snapReader) strings(count, size uint64) ([]byte, string) {
	if count > uint64(len(r.b))/4 {
		r.bad = true
		return nil, ""
	}
	off := r.take(4 * (count + 1))
	blk := r.take(size)
	if r.bad {
		return nil, ""
	}
	prev := uint32(0)
	for i := 0; i < len(off); i += 4 {
		x := binary.LittleEndian.Uint32(off[i:])
		if x < prev || uint64(x) > size || i == 0 && x != 0 {
			r.bad = true
			return nil, ""
		}
		prev = x
	}
	if uint64(prev) != size {
		r.bad = true
	}
	return off, string(blk)
}

// cut returns string i of a column.
func cut(off []byte, blk string, i int) string {
	return blk[binary.LittleEndian.Uint32(off[4*i:]):binary.LittleEndian.Uint32(off[4*i+4:])]
}

// decodeV2 loads a version 2 snapshot, or with users a version 3 one
// (without magic and CRC), into the empty tenant t.
func (t *tenant) decodeV2(b []byte, users bool) error {
	header := snapHeader
	if users {
		header = snapHeaderV3
	}
	if len(b) < header {
		return errSnapshot
	}
	le := binary.LittleEndian
	var h [9]uint64
	for i := range header / 8 {
		h[i] = le.Uint64(b[8*i:])
	}
	seq, ndocs, nterms, nposts := h[0], h[1], h[2], h[3]
	r := &snapReader{b: b[header:]}
	if ndocs > uint64(len(r.b)) || nterms > uint64(len(r.b)) || nposts > uint64(len(r.b)) || ndocs >= math.MaxUint32 {
		return errSnapshot
	}
	idOff, ids := r.strings(ndocs, h[4])
	agentOff, agents := r.strings(ndocs, h[5])
	userOff, userText := []byte(nil), ""
	if users {
		userOff, userText = r.strings(ndocs, h[8])
	}
	expires := r.take(8 * ndocs)
	versions := r.take(8 * ndocs)
	lens := r.take(4 * ndocs)
	termOff, terms := r.strings(nterms, h[6])
	postOff := r.take(8 * (nterms + 1))
	byteOff := r.take(8 * (nterms + 1))
	post := r.take(h[7])
	if r.bad || len(r.b) != 0 {
		return errSnapshot
	}
	// The offsets must rise to the sizes of what they index.
	for _, o := range []struct {
		off []byte
		end uint64
	}{{postOff, nposts}, {byteOff, uint64(len(post))}} {
		var prev uint64
		for i := 0; i < len(o.off); i += 8 {
			x := le.Uint64(o.off[i:])
			if x < prev || x > o.end || i == 0 && x != 0 {
				return errSnapshot
			}
			prev = x
		}
		if prev != o.end {
			return errSnapshot
		}
	}

	t.seq = int64(seq)
	t.docs, t.lens = make([]doc, ndocs), make([]uint32, ndocs)
	t.post = make(map[string]*postings, nterms)
	ps := make([]postings, nterms)
	allDocs, allTfs := make([]uint32, nposts), make([]uint16, nposts)

	// Three kinds of work run at once: the documents and their map, the
	// terms' map, and the postings in chunks of about equal bytes.
	var wg sync.WaitGroup
	var failed atomic.Bool
	wg.Go(func() {
		for d := range t.docs {
			dc := &t.docs[d]
			dc.id, dc.agent, dc.live = cut(idOff, ids, d), cut(agentOff, agents, d), true
			if users {
				dc.user = cut(userOff, userText, d)
			}
			dc.expires, dc.version = int64(le.Uint64(expires[8*d:])), int64(le.Uint64(versions[8*d:]))
			t.lens[d] = le.Uint32(lens[4*d:])
			t.totalLen += int64(t.lens[d])
		}
		t.indexUsers()
		t.byID = idTableFor(len(t.docs))
		for range t.docs {
			if !t.byID.add(t.docs) {
				failed.Store(true)
				return
			}
		}
	})
	wg.Go(func() {
		for i := range ps {
			t.post[cut(termOff, terms, i)] = &ps[i]
		}
	})
	chunks := max(1, runtime.GOMAXPROCS(0)) * 4
	for c := range chunks {
		lo, hi := uint64(len(post))*uint64(c)/uint64(chunks), uint64(len(post))*uint64(c+1)/uint64(chunks)
		// The terms whose bytes start in [lo, hi).
		wg.Go(func() {
			i := sort.Search(int(nterms), func(i int) bool { return le.Uint64(byteOff[8*i:]) >= lo })
			for ; i < int(nterms) && le.Uint64(byteOff[8*i:]) < hi; i++ {
				if !decodePostings(&ps[i], post[le.Uint64(byteOff[8*i:]):le.Uint64(byteOff[8*i+8:])],
					allDocs, allTfs, le.Uint64(postOff[8*i:]), le.Uint64(postOff[8*i+8:]), uint32(ndocs)) {
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() || len(t.post) != int(nterms) {
		return errSnapshot
	}
	t.liveDocs, t.nPost = int64(ndocs), int64(nposts)
	t.strBytes = int64(h[4] + h[5] + h[6])
	return nil
}

// uvarint reads one unsigned varint off b and returns it with the rest
// of b, or nil for no valid varint.
func uvarint(b []byte) (uint64, []byte) {
	x, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, nil
	}
	return x, b[k:]
}

// decodePostings decodes one term's postings, from to to among all
// postings, into p, its slices cut from the shared arrays (their capacity
// ends with them, so growing one copies it out). The docs must rise and
// be under ndocs, and the bytes be used up.
func decodePostings(p *postings, b []byte, allDocs []uint32, allTfs []uint16, from, to uint64, ndocs uint32) bool {
	n := int(to - from)
	if n == 0 {
		return false
	}
	docs := allDocs[from:to:to]
	var d uint64
	for i := range docs {
		var x uint64
		if len(b) > 0 && b[0] < 0x80 { // one byte: most gaps and frequencies
			x, b = uint64(b[0]), b[1:]
		} else if x, b = uvarint(b); b == nil {
			return false
		}
		if i > 0 && x == 0 {
			return false
		}
		if d += x; d >= uint64(ndocs) {
			return false
		}
		docs[i] = uint32(d)
	}
	p.docs = docs
	tfs := allTfs[from:to:to]
	for i := range tfs {
		var x uint64
		if len(b) > 0 && b[0] < 0x80 { // one byte: most gaps and frequencies
			x, b = uint64(b[0]), b[1:]
		} else if x, b = uvarint(b); b == nil {
			return false
		}
		if x > 0xffff && p.wide == nil {
			p.wide = make([]uint32, n)
			for j := range i {
				p.wide[j] = uint32(tfs[j])
			}
		}
		if x > math.MaxUint32 {
			return false
		}
		if p.wide != nil {
			p.wide[i] = uint32(x)
		} else {
			tfs[i] = uint16(x)
		}
	}
	if p.wide == nil {
		p.tfs = tfs
	}
	return len(b) == 0
}

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
