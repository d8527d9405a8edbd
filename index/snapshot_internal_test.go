package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// encodeV1 writes a version 1 snapshot, as engram wrote them before
// version 2: what an upgraded server finds on disk.
func (t *tenant) encodeV1() []byte {
	buf := []byte(snapMagicV1)
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

// synthetic builds a tenant of n live documents of about 20 terms each,
// drawn from a Zipf distribution over a vocabulary of n/5 terms, with a
// few private, expiring and dead documents and one frequency too wide for
// 16 bits: the shape of a generated bilingual corpus, without analysing
// any text.
func synthetic(n int) *tenant {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	vocab := max(n/5, 50)
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(vocab-1))
	t := newTenant(0)
	terms := make([]string, vocab)
	for i := range terms {
		terms[i] = fmt.Sprintf("w%x", i*2654435761%(1<<32))
	}
	seen := map[int]bool{}
	for d := range n {
		id := fmt.Sprintf("mem_%022d", d)
		dc := doc{id: id, version: int64(1 + d%3), live: d%97 != 5}
		if d%10 == 3 {
			dc.agent = "nurse"
		}
		if d%50 == 7 {
			dc.expires = 1_900_000_000_000_000_000
		}
		t.docs = append(t.docs, dc)
		t.byID.add(t.docs)
		clear(seen)
		var dl uint32
		for len(seen) < 20 {
			w := int(zipf.Uint64())
			if seen[w] {
				continue
			}
			seen[w] = true
			tf := uint32(10 * (1 + rng.IntN(3)))
			if d == 11 && len(seen) == 1 {
				tf = 70_000
			}
			dl += tf
			if dc.live {
				p := t.post[terms[w]]
				if p == nil {
					p = &postings{}
					t.post[terms[w]] = p
					t.strBytes += int64(len(terms[w]))
				}
				p.add(uint32(d), tf)
				t.nPost++
			}
		}
		if dc.live {
			t.lens = append(t.lens, dl)
			t.liveDocs++
			t.totalLen += int64(dl)
		} else {
			t.lens = append(t.lens, 0)
		}
		t.strBytes += int64(len(dc.id) + len(dc.agent))
	}
	t.seq = int64(n + 10)
	return t
}

// compact returns the tenant's live index renumbered as a snapshot keeps
// it, for comparing two tenants field by field.
func compact(t *tenant) (docs []doc, lens []uint32, post map[string][2][]uint32) {
	renum := map[uint32]uint32{}
	for d := range t.docs {
		if t.docs[d].live {
			renum[uint32(d)] = uint32(len(docs))
			docs = append(docs, t.docs[d])
			lens = append(lens, t.lens[d])
		}
	}
	post = map[string][2][]uint32{}
	for term, p := range t.post {
		var ds, tfs []uint32
		for i, d := range p.docs {
			ds = append(ds, renum[d])
			tfs = append(tfs, p.tf(i))
		}
		post[term] = [2][]uint32{ds, tfs}
	}
	return docs, lens, post
}

// Both versions decode to the live index that was encoded, statistics
// included; a version 2 load's postings can still change.
func TestSnapshotRoundTrip(t *testing.T) {
	src := synthetic(3000)
	wantDocs, wantLens, wantPost := compact(src)
	for _, v := range []struct {
		name string
		enc  func() []byte
	}{{"v1", src.encodeV1}, {"v2", src.encode}} {
		t.Run(v.name, func(t *testing.T) {
			got := newTenant(0)
			if err := got.decode(v.enc()); err != nil {
				t.Fatal(err)
			}
			docs, lens, post := compact(got)
			if !reflect.DeepEqual(docs, wantDocs) || !slices.Equal(lens, wantLens) || !reflect.DeepEqual(post, wantPost) {
				t.Fatal("decoded index differs from the encoded one")
			}
			var strBytes int64
			for _, dc := range wantDocs {
				strBytes += int64(len(dc.id) + len(dc.agent))
			}
			for term := range wantPost {
				strBytes += int64(len(term))
			}
			if got.seq != src.seq || got.liveDocs != src.liveDocs || got.totalLen != src.totalLen || got.nPost != src.nPost ||
				got.strBytes != strBytes {
				t.Errorf("statistics: seq %d/%d docs %d/%d len %d/%d postings %d/%d strings %d/%d", got.seq, src.seq,
					got.liveDocs, src.liveDocs, got.totalLen, src.totalLen, got.nPost, src.nPost, got.strBytes, strBytes)
			}
			for d := range got.docs {
				if x, ok := got.byID.find(got.docs, got.docs[d].id); !ok || x != uint32(d) {
					t.Fatalf("byID of %s", got.docs[d].id)
				}
			}
			// Postings cut from the shared arrays grow and shrink on
			// their own.
			var a, b *postings
			for _, p := range got.post {
				if len(p.docs) > 1 && a == nil {
					a = p
				} else if len(p.docs) > 1 && b == nil {
					b = p
				}
			}
			bBefore := slices.Clone(b.docs)
			last := a.docs[len(a.docs)-1]
			a.remove(a.docs[0])
			a.add(last+1, 10)
			a.add(last+2, 10)
			if !slices.Equal(b.docs, bBefore) {
				t.Fatal("changing one term's postings moved another's")
			}
		})
	}
}

// A damaged version 2 file (any byte changed past the magic, the CRC
// fixed up, or cut short) is refused, never half loaded or a panic.
func TestSnapshotV2Damaged(t *testing.T) {
	good := synthetic(200).encode()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := slices.Clone(good)
		i := len(snapMagic) + rng.IntN(len(b)-len(snapMagic)-4)
		b[i] ^= byte(1 + rng.IntN(255))
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		tn := newTenant(0)
		if err := tn.decode(b); err == nil {
			// A changed version, length or frequency is still a
			// consistent index; anything else must be refused.
			if _, _, post := compact(tn); len(post) == 0 {
				t.Fatalf("byte %d: an empty index decoded", i)
			}
		}
	}
	for _, n := range []int{0, len(snapMagic), len(snapMagic) + 10, len(good) / 2} {
		b := slices.Clone(good[:n])
		b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
		if err := newTenant(0).decode(b); err == nil {
			t.Errorf("cut at %d: decoded", n)
		}
	}
}

// An engram that wrote version 1 snapshots is upgraded: its tenants load
// from the old files (and answer as the store does), and a file of an
// unknown version is rebuilt from the store.
func TestSnapshotOldFilesLoad(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	var ms []*engram.Memory
	for i := range 400 {
		ms = append(ms, &engram.Memory{Content: fmt.Sprintf("heron %d nests near pond %d 苍鹭 %d", i, i%7, i%3), Category: "life",
			Tags: []string{fmt.Sprint("t", i%5)}})
	}
	if _, err := db.CreateMemories(ctx, ms); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	id := engram.TenantFromContext(ctx)
	path := filepath.Join(dir, id+".idx")
	plain := New(db, Config{})
	var old []byte
	if err := plain.read(ctx, func(tn *tenant) error { old = tn.encodeV1(); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		file  []byte
		fresh bool // loaded from the store
	}{{"v1", old, false}, {"unknown version", append([]byte("engram-index-9\n"), old[len(snapMagicV1):]...), true}} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, c.file, 0o600); err != nil {
				t.Fatal(err)
			}
			ix := New(db, Config{Dir: dir})
			st, err := ix.Load(ctx, true)
			if err != nil || st.Docs != 400 {
				t.Fatalf("load: %+v %v", st, err)
			}
			var snapSeq int64
			if err := ix.read(ctx, func(tn *tenant) error { snapSeq = tn.snapSeq; return nil }); err != nil {
				t.Fatal(err)
			}
			if fromFile := snapSeq != 0; fromFile == c.fresh {
				t.Errorf("loaded from the file: %v", fromFile)
			}
			for _, q := range []string{"heron pond", "苍鹭", "t3 nests"} {
				x, err := ix.SearchMemories(ctx, engram.LexicalQuery{Text: q, Limit: 20, Expand: true})
				if err != nil {
					t.Fatal(err)
				}
				y, err := plain.SearchMemories(ctx, engram.LexicalQuery{Text: q, Limit: 20, Expand: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(x) == 0 || len(x) != len(y) {
					t.Fatalf("%q: %d hits vs %d", q, len(x), len(y))
				}
				for i := range x {
					if x[i].Memory.ID != y[i].Memory.ID || x[i].Score != y[i].Score {
						t.Fatalf("%q #%d: %s %v vs %s %v", q, i, x[i].Memory.ID, x[i].Score, y[i].Memory.ID, y[i].Score)
					}
				}
			}
		})
	}
}
