package topk_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/topk"
)

type scored struct {
	id    int
	score float64
}

// better orders by score, then the higher id first: a strict order.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return newer(a, b)
}

func newer(a, b scored) bool { return a.id > b.id }

// reference is the best k by sorting everything.
func reference(vs []scored, k int) []scored {
	all := slices.Clone(vs)
	slices.SortFunc(all, func(a, b scored) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return all[:min(k, len(all))]
}

// TestHeapAgreesWithSort: for any input and k, the heap keeps what a full
// sort would put first, in the same order, whatever order values arrive
// in, ties (equal scores) included.
func TestHeapAgreesWithSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		n, k := r.IntN(200), r.IntN(40)-2
		vs := make([]scored, n)
		for i := range vs {
			vs[i] = scored{i, float64(r.IntN(20))} // many ties
		}
		r.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		h := topk.New(k, newer)
		for _, v := range vs {
			admits := h.Admits(v.score, v)
			before := slices.Clone(h.Sorted())
			// Sorted spends the heap: rebuild it from what it kept.
			h = topk.New(k, newer)
			for _, b := range before {
				h.Push(b.score, b)
			}
			h.Push(v.score, v)
			after := h.Sorted()
			if admits != slices.Contains(after, v) {
				t.Fatalf("trial %d: Admits(%v) = %v, but after Push the heap holds %v", trial, v, admits, after)
			}
			h = topk.New(k, newer)
			for _, a := range after {
				h.Push(a.score, a)
			}
		}
		want := reference(vs, max(k, 0))
		if got := h.Sorted(); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("trial %d (n=%d k=%d): got %v, want %v", trial, n, k, got, want)
		}
	}
}

func TestHeapEdges(t *testing.T) {
	h := topk.New(0, newer)
	h.Push(1, scored{1, 1})
	if h.Admits(2, scored{2, 2}) || h.Len() != 0 || len(h.Sorted()) != 0 {
		t.Error("k = 0 keeps nothing")
	}
	h = topk.New(3, newer)
	h.Push(math.NaN(), scored{99, math.NaN()})
	if h.Admits(math.NaN(), scored{98, math.NaN()}) || h.Len() != 0 {
		t.Error("a NaN score is kept")
	}
	for i := range 10 {
		h.Push(float64(i%5), scored{i, float64(i % 5)})
	}
	if got := h.Sorted(); !slices.Equal(got, []scored{{9, 4}, {4, 4}, {8, 3}}) {
		t.Errorf("best 3: %v", got)
	}
}

// BenchmarkHeap is the index's case: the best 200 of 20,000 touched docs.
func BenchmarkHeap(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	vs := make([]scored, 20_000)
	for i := range vs {
		vs[i] = scored{i, r.Float64()}
	}
	b.ReportAllocs()
	for b.Loop() {
		h := topk.New(200, newer)
		for _, v := range vs {
			if h.Admits(v.score, v) {
				h.Push(v.score, v)
			}
		}
		_ = h.Sorted()
	}
}

// BenchmarkSortAll is what the heap saves: sorting every value.
func BenchmarkSortAll(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	vs := make([]scored, 20_000)
	for i := range vs {
		vs[i] = scored{i, r.Float64()}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = reference(vs, 200)
	}
}
