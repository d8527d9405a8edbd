package router

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"maps"
	"testing"
)

// sameModel fails unless two models hold the same counts.
func sameModel(t *testing.T, a, b *model) {
	t.Helper()
	if a.docs != b.docs || !maps.Equal(a.tokens, b.tokens) || !maps.Equal(a.vocab, b.vocab) ||
		!maps.Equal(a.counts, b.counts) || !maps.Equal(a.cats, b.cats) {
		t.Fatalf("models differ: %d docs %v / %d docs %v", a.docs, a.tokens, b.docs, b.tokens)
	}
}

func snapModel() *model {
	r := New(DefaultConfig())
	for _, d := range []struct{ cat, text string }{
		{"work", "Falcon migration cutover moved to the weekend"},
		{"work", "sprint review of the Falcon migration"},
		{"life", "我喜欢喝咖啡, dinner with Ann on Friday"},
		{"emotion", "stressed about the Falcon deadline"},
		{"preference", "I prefer tea over coffee"},
	} {
		r.Observe("t", d.cat, d.text)
	}
	r.Forget("t", "emotion", "stressed about the Falcon deadline")
	return r.tenants["t"]
}

func TestSnapshotRoundTrip(t *testing.T) {
	m := snapModel()
	b := encode(m, 1234, 5678)
	got, seq, live, err := decode(b)
	if err != nil || seq != 1234 || live != 5678 {
		t.Fatalf("decode: seq %d live %d err %v", seq, live, err)
	}
	sameModel(t, m, got)
	// The bytes depend on the counts only, not on map order.
	if again := encode(got, 1234, 5678); !bytes.Equal(again, b) {
		t.Error("re-encoded snapshot differs")
	}
	if got, seq, _, err := decode(encode(nil, 7, 0)); err != nil || got != nil || seq != 7 {
		t.Errorf("empty model: %v seq %d err %v", got, seq, err)
	}
}

// TestSnapshotRefused: every damaged or foreign file is errSnapshot, never
// a model.
func TestSnapshotRefused(t *testing.T) {
	good := encode(snapModel(), 99, 5000)
	cases := map[string][]byte{
		"empty":           nil,
		"truncated":       good[:len(good)/2],
		"no checksum":     good[:len(good)-4],
		"unknown version": append([]byte("engram-router-2\n"), good[len(snapMagic):]...),
		"index file":      append([]byte("engram-index-3\n\n"), good[len(snapMagic):]...),
	}
	// A checksum that matches bytes encode never writes: trailing bytes,
	// a category index out of range.
	withCRC := func(body []byte) []byte {
		return binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
	}
	body := good[:len(good)-4]
	cases["trailing bytes"] = withCRC(append(bytes.Clone(body), 0))
	bad := bytes.Clone(body)
	bad = binary.AppendUvarint(bad[:len(snapMagic)+8], 1)       // docs
	bad = binary.AppendUvarint(bad, 5000)                       // live
	bad = binary.AppendUvarint(bad, 1)                          // one category
	bad = append(binary.AppendUvarint(bad, 4), "work"...)       // "work"
	bad = binary.AppendUvarint(bad, 1)                          // one term
	bad = append(binary.AppendUvarint(bad, 6), "falcon"...)     // "falcon"
	bad = binary.AppendUvarint(binary.AppendUvarint(bad, 1), 3) // in one category: index 3
	cases["category out of range"] = withCRC(binary.AppendUvarint(bad, 1))
	for i := len(snapMagic); i < len(good); i += 7 {
		flipped := bytes.Clone(good)
		flipped[i] ^= 0x40
		cases["byte flipped"] = flipped
		if _, _, _, err := decode(flipped); !errors.Is(err, errSnapshot) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	for name, b := range cases {
		if m, _, _, err := decode(b); !errors.Is(err, errSnapshot) || m != nil {
			t.Errorf("%s: model %v, error %v", name, m, err)
		}
	}
}
