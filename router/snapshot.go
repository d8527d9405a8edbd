package router

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A snapshot is one tenant's learned model in a file, <dir>/<tenant>.router,
// with the feed sequence it includes, so that a big tenant's first route
// on a fresh server reads a file rather than every memory of the tenant
// (and analyses none). A load applies the changes after that sequence and
// goes back to the store when the feed no longer has them; a file of
// another version, a broken one or one that does not decode is ignored and
// the model rebuilt from the store, which overwrites it. The file is a
// cache of the store: deleting it loses nothing.
//
// Layout (version 1): the magic; the little-endian uint64 feed sequence;
// then unsigned varints — the labelled documents, the live memories seen
// (what decides whether a snapshot is kept), the categories, each as its
// length and bytes; the terms, and for each term (sorted) its length and
// bytes, how many categories hold it, and per category its index and the
// term's count there; then a CRC-32 (IEEE) of everything before it. The
// vocabulary and each category's token total are sums of these counts.
const snapMagic = "engram-router-1\n"

// A tenant with at least snapshotMinLive live memories keeps a snapshot;
// a new one is written after the tenant was loaded from the store, or
// once it applied max(snapshotMinChanges, live/4) changes since the last.
const (
	snapshotMinLive    = 5_000
	snapshotMinChanges = 10_000
)

// errSnapshot is any snapshot file that cannot be used.
var errSnapshot = errors.New("router: unusable snapshot file")

// snapPath is the tenant's snapshot file, or "" when the service keeps
// none or the tenant id is not a safe file name.
func (s *Service) snapPath(tenant string) string {
	if s.dir == "" || tenant == "" {
		return ""
	}
	for _, r := range tenant {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return ""
		}
	}
	return filepath.Join(s.dir, tenant+".router")
}

// encode returns the snapshot bytes of m at feed sequence seq, with live
// live memories. A nil model (no labelled memory) encodes as empty.
func encode(m *model, seq int64, live int) []byte {
	if m == nil {
		m = newModel()
	}
	cats := slices.Sorted(func(yield func(string) bool) {
		for c := range m.tokens {
			if !yield(c) {
				return
			}
		}
	})
	catIdx := make(map[string]uint64, len(cats))
	for i, c := range cats {
		catIdx[c] = uint64(i)
	}
	byTerm := make(map[string][]termCat, len(m.vocab))
	for k := range m.counts {
		byTerm[k.term] = append(byTerm[k.term], k)
	}
	terms := make([]string, 0, len(byTerm))
	for t := range byTerm {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	buf := make([]byte, 0, 64+len(m.counts)*12)
	buf = append(buf, snapMagic...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(seq))
	buf = binary.AppendUvarint(buf, uint64(m.docs))
	buf = binary.AppendUvarint(buf, uint64(live))
	buf = binary.AppendUvarint(buf, uint64(len(cats)))
	for _, c := range cats {
		buf = binary.AppendUvarint(buf, uint64(len(c)))
		buf = append(buf, c...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(terms)))
	for _, t := range terms {
		ks := byTerm[t]
		slices.SortFunc(ks, func(a, b termCat) int { return strings.Compare(a.cat, b.cat) })
		buf = binary.AppendUvarint(buf, uint64(len(t)))
		buf = append(buf, t...)
		buf = binary.AppendUvarint(buf, uint64(len(ks)))
		for _, k := range ks {
			buf = binary.AppendUvarint(buf, catIdx[k.cat])
			buf = binary.AppendUvarint(buf, uint64(m.counts[k]))
		}
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.ChecksumIEEE(buf))
}

// snapDecoder reads a snapshot's varints and strings; the first read past
// the end or of a bad value sets bad, and every later read returns zero.
type snapDecoder struct {
	b   []byte
	bad bool
}

func (d *snapDecoder) uint(limit uint64) uint64 {
	if d.bad {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 || x > limit {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *snapDecoder) str() string {
	n := d.uint(uint64(len(d.b)))
	if d.bad {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// decode reads a snapshot written by encode: the model, its feed sequence
// and the live memories it saw. Any other bytes are errSnapshot.
func decode(b []byte) (*model, int64, int, error) {
	if len(b) < len(snapMagic)+8+4 || string(b[:len(snapMagic)]) != snapMagic {
		return nil, 0, 0, errSnapshot
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, 0, 0, errSnapshot
	}
	seq := int64(binary.LittleEndian.Uint64(body[len(snapMagic):]))
	d := &snapDecoder{b: body[len(snapMagic)+8:]}
	m := newModel()
	m.docs = int(d.uint(1 << 40))
	live := int(d.uint(1 << 40))
	cats := make([]string, d.uint(uint64(len(d.b))))
	for i := range cats {
		cats[i] = m.cat(d.str())
	}
	nterms := d.uint(uint64(len(d.b)))
	for range nterms {
		t := d.str()
		k := d.uint(uint64(len(cats)))
		if k == 0 {
			d.bad = true
		}
		for range k {
			c := d.uint(uint64(len(cats)) - 1)
			n := d.uint(1 << 40)
			if d.bad || n == 0 || m.counts[termCat{t, cats[c]}] != 0 {
				return nil, 0, 0, errSnapshot
			}
			m.counts[termCat{t, cats[c]}] = int(n)
			m.tokens[cats[c]] += int(n)
			m.vocab[t]++
		}
		if d.bad {
			return nil, 0, 0, errSnapshot
		}
	}
	if d.bad || len(d.b) != 0 || seq < 0 || m.docs < 0 || len(m.tokens) != len(cats) {
		return nil, 0, 0, errSnapshot
	}
	if len(m.counts) == 0 {
		m = nil
	}
	return m, seq, live, nil
}

// readSnapshot returns the tenant's model from its file, with the feed
// sequence and live memories it holds; an unusable file is removed.
func (s *Service) readSnapshot(tenant string) (*model, int64, int, bool) {
	path := s.snapPath(tenant)
	if path == "" {
		return nil, 0, 0, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, false
	}
	m, seq, live, err := decode(b)
	if err != nil {
		s.log.Warn("router snapshot unusable; the tenant loads from the store", "tenant", tenant, "err", err)
		_ = os.Remove(path)
		return nil, 0, 0, false
	}
	return m, seq, live, true
}

// writeFile writes the snapshot b, taken at feed sequence seq, through a
// temporary file and a rename, so that a reader never sees half a file.
// Under s.files: a write older than one already made is skipped, and so
// is every write for a state that Forget dropped, so that a write begun
// before the forget cannot leave the forgotten words on disk.
func (s *Service) writeFile(tenant string, st *tenantState, seq int64, b []byte) error {
	path := s.snapPath(tenant)
	s.files.Lock()
	defer s.files.Unlock()
	if st.forgotten || seq <= st.fileSeq {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, tenant+".router.*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	st.fileSeq = seq
	return nil
}

// removeFile deletes the tenant's snapshot file; forgotten, when not
// nil, is the state Forget dropped, whose pending writes are then void.
func (s *Service) removeFile(tenant string, forgotten *tenantState) error {
	s.files.Lock()
	defer s.files.Unlock()
	if forgotten != nil {
		forgotten.forgotten = true
	}
	path := s.snapPath(tenant)
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("router: remove snapshot: %w", err)
	}
	return nil
}

// encodeTenant returns the snapshot bytes of the tenant's model.
func (r *Router) encodeTenant(tenant string, seq int64, live int) []byte {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return encode(r.tenants[tenant], seq, live)
}

// setModel replaces the tenant's model with m (nil: none).
func (r *Router) setModel(tenant string, m *model) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m == nil {
		delete(r.tenants, tenant)
		return
	}
	r.tenants[tenant] = m
}
