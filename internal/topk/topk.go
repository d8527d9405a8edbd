// Package topk selects the best k of many values: the one top-k of engram
// (lexical search, vector search, the reflector's most central members).
// A recall reads a few dozen of the thousands of memories a common term
// touches, so it keeps a min-heap of k, the worst kept on top, instead of
// sorting every match: n log k, and a value worse than the k kept costs
// one comparison.
package topk

import (
	"math"
	"slices"
)

// Heap keeps the k values of highest score pushed into it. tie orders
// values of equal score (tie(a, b): a comes first) and must break every
// tie (e.g. by id), so that which values are kept, and their order, never
// depend on the order they came in. A NaN score is never kept: it has no
// place in the order.
type Heap[T any] struct {
	k   int
	tie func(a, b T) bool
	h   []entry[T]
}

type entry[T any] struct {
	score float64
	v     T
}

// New returns a heap that keeps the best k values (none when k ≤ 0).
func New[T any](k int, tie func(a, b T) bool) *Heap[T] {
	k = max(k, 0)
	return &Heap[T]{k: k, tie: tie, h: make([]entry[T], 0, k)}
}

// better orders by score, then by tie.
func (h *Heap[T]) better(a, b entry[T]) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return h.tie(a.v, b.v)
}

// Len is the number of values kept, at most k.
func (h *Heap[T]) Len() int { return len(h.h) }

// Admits reports whether Push(score, v) would keep v: fewer than k are
// kept, or v is better than the worst kept. A caller with a costly filter
// asks first and filters only the values that would enter; the common
// case, a score below the worst kept, costs one comparison of floats.
func (h *Heap[T]) Admits(score float64, v T) bool {
	if math.IsNaN(score) {
		return false
	}
	if len(h.h) < h.k {
		return true
	}
	if h.k == 0 || score < h.h[0].score {
		return false
	}
	return h.better(entry[T]{score, v}, h.h[0])
}

// Push offers v with its score: it is kept while it is among the best k
// so far.
func (h *Heap[T]) Push(score float64, v T) {
	switch {
	case math.IsNaN(score):
	case len(h.h) < h.k:
		h.h = append(h.h, entry[T]{score, v})
		h.up(len(h.h) - 1)
	case h.Admits(score, v):
		h.h[0] = entry[T]{score, v}
		h.down(0)
	}
}

// Sorted returns the values kept, best first. The heap is spent.
func (h *Heap[T]) Sorted() []T {
	slices.SortFunc(h.h, func(a, b entry[T]) int {
		switch {
		case h.better(a, b):
			return -1
		case h.better(b, a):
			return 1
		}
		return 0
	})
	out := make([]T, len(h.h))
	for i, e := range h.h {
		out[i] = e.v
	}
	h.h, h.k = nil, 0
	return out
}

// up moves the value at i towards the root while it is worse than its
// parent: the root is the worst kept.
func (h *Heap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.better(h.h[p], h.h[i]) {
			return
		}
		h.h[i], h.h[p] = h.h[p], h.h[i]
		i = p
	}
}

// down moves the value at i away from the root while a child is worse.
func (h *Heap[T]) down(i int) {
	for {
		l, m := 2*i+1, i
		if l < len(h.h) && h.better(h.h[m], h.h[l]) {
			m = l
		}
		if r := l + 1; r < len(h.h) && h.better(h.h[m], h.h[r]) {
			m = r
		}
		if m == i {
			return
		}
		h.h[i], h.h[m] = h.h[m], h.h[i]
		i = m
	}
}
