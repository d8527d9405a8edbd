package learning

import (
	"math"
	"testing"

	"github.com/engram-memory/engram"
)

// fuse weighs the lexical score against the best lexical score and the
// cosine by its place in the nearest list, keeps what the lexical hit
// knew (match, concept), and orders best first.
func TestFuseConvex(t *testing.T) {
	mem := func(id string) *engram.Memory { return &engram.Memory{ID: id} }
	lexical := []engram.LexicalHit{{Memory: mem("a"), Score: 10, Match: 0.9, Concept: &engram.Concept{}}, {Memory: mem("b"), Score: 5, Match: 0.5}}
	nearest := []engram.LexicalHit{{Memory: mem("c"), Score: 0.9}, {Memory: mem("a"), Score: 0.5}, {Memory: mem("d"), Score: 0.1}}
	got := fuse(lexical, nearest, 0.3)
	want := []struct {
		id    string
		score float64
	}{{"a", 0.7 + 0.3*0.4/0.8}, {"b", 0.35}, {"c", 0.3}, {"d", 0}}
	if len(got) != len(want) {
		t.Fatalf("fused %d hits, want %d", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Memory.ID != w.id || math.Abs(got[i].Score-w.score) > 1e-9 {
			t.Errorf("hit %d: %s %.4f, want %s %.4f", i, got[i].Memory.ID, got[i].Score, w.id, w.score)
		}
	}
	if got[0].Match != 0.9 || got[0].Concept == nil || got[2].Match != 0 {
		t.Errorf("lexical fields lost or invented: %+v %+v", got[0], got[2])
	}
	// One list alone: the embedding's single hit takes the whole weight,
	// and lexical hits without any nearest keep their share.
	if got := fuse(nil, nearest[:1], 0.3); len(got) != 1 || got[0].Score != 0.3 {
		t.Errorf("nearest alone: %+v", got)
	}
	if got := fuse(lexical, nil, 0.3); len(got) != 2 || got[0].Score != 0.7 || got[1].Score != 0.35 {
		t.Errorf("lexical alone: %+v", got)
	}
}

// Only a nearest memory whose cosine reaches the floor agrees with the
// query: a question nothing answers has nearest memories too, at low
// cosines, and they must not pass the cut on the embedding's word alone.
func TestFuseMatchAgreeFloor(t *testing.T) {
	mem := func(id string) *engram.Memory { return &engram.Memory{ID: id} }
	lexical := []engram.LexicalHit{{Memory: mem("a"), Score: 3, Match: 0.5}}
	nearest := []engram.LexicalHit{{Memory: mem("b"), Score: 0.6}, {Memory: mem("a"), Score: 0.3}}
	match := func(floor float64) map[string]float64 {
		out := map[string]float64{}
		for _, h := range fuseMatch(fuse(lexical, nearest, 0.15), lexical, nearest, floor) {
			out[h.Memory.ID] = h.Match
		}
		return out
	}
	if got := match(0); math.Abs(got["a"]-(0.5+0.5*denseLift)) > 1e-9 || got["b"] != denseLift {
		t.Errorf("floor 0, every nearest agrees: %v", got)
	}
	if got := match(0.45); got["a"] != 0.5 || got["b"] != denseLift {
		t.Errorf("floor 0.45, only b's cosine reaches it: %v", got)
	}
	if got := match(0.7); got["a"] != 0.5 || got["b"] != 0 {
		t.Errorf("floor 0.7, nobody agrees: %v", got)
	}
}
