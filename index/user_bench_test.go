package index

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// userTenant is a tenant of users end users with perUser memories each,
// all about the same few subjects (so that a query's terms have postings
// in every user), plus shared memories.
func userTenant(users, perUser, shared int) *tenant {
	subjects := []string{"coffee", "dentist", "flight", "birthday", "project"}
	t := newTenant(0)
	put := func(id, user, content string) {
		t.put(&engram.Memory{ID: id, UserID: user, Content: content, Category: "life", Version: 1, Valid: true})
	}
	for i := range shared {
		put(fmt.Sprintf("mem_shared_%d", i), "", fmt.Sprintf("office %s policy number %d", subjects[i%len(subjects)], i))
	}
	for u := range users {
		user := fmt.Sprintf("u%06d", u)
		for j := range perUser {
			put(fmt.Sprintf("mem_%s_%d", user, j), user,
				fmt.Sprintf("%s note %d of %s about the %s", user, j, user, subjects[(u+j)%len(subjects)]))
		}
	}
	return t
}

// BenchmarkUserRecall scores one user's query (terms every user holds)
// in tenants of 1, 1,000, 10,000 and 100,000 users of 20 memories each (2M): the
// lexical index's part of a recall (accumulate and top), without the row
// reads, which are the same in all. Other users' postings are skipped
// (accumulate), so that the cost grows with the postings read, not with
// the documents scored and ranked.
func BenchmarkUserRecall(b *testing.B) {
	for _, users := range []int{1, 1_000, 10_000, 100_000} {
		t := userTenant(users, 20, 50)
		terms := analysis.QueryTerms("when is my coffee and dentist appointment")
		user := "u000000"
		ix := &Index{}
		now := int64(0)
		b.Run(fmt.Sprintf("users=%d", users), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := ix.getScratch(len(t.docs))
				for _, term := range terms {
					if w, p, ok := t.termIDF(term); ok {
						t.accumulate(s, p, w, 1, true, user)
					}
				}
				hits := top(s, 40, func(d uint32) bool { return t.visible(d, "", user, now) })
				if len(hits) == 0 {
					b.Fatal("no hits")
				}
				for _, h := range hits {
					if u := t.docs[h.doc].user; u != "" && u != user {
						b.Fatalf("another user's memory %s", t.docs[h.doc].id)
					}
				}
				ix.putScratch(s)
			}
		})
	}
}

// TestUserSnapshot: a snapshot keeps each document's user, and a loaded
// tenant's search for a user sees the shared and own documents only, in
// both ways of reading postings (scan, and look-up of the user's docs).
func TestUserSnapshot(t *testing.T) {
	src := userTenant(300, 20, 5)
	got := newTenant(0)
	if err := got.decode(src.encode()); err != nil {
		t.Fatal(err)
	}
	for d := range src.docs {
		if src.docs[d].user != got.docs[d].user {
			t.Fatalf("doc %d: user %q, want %q", d, got.docs[d].user, src.docs[d].user)
		}
	}
	ix := &Index{}
	for _, tn := range []*tenant{src, got} {
		for _, user := range []string{"u000007", ""} {
			for _, q := range []string{"coffee note", "office policy", "u000007"} {
				s := ix.getScratch(len(tn.docs))
				for _, term := range analysis.QueryTerms(q) {
					if w, p, ok := tn.termIDF(term); ok {
						tn.accumulate(s, p, w, 1, true, user)
					}
				}
				hits := top(s, 1000, func(d uint32) bool { return tn.visible(d, "", user, 0) })
				if len(hits) == 0 && (user != "" || q == "office policy") {
					t.Errorf("user %q, %q: no hits", user, q)
				}
				for _, h := range hits {
					if u := tn.docs[h.doc].user; u != "" && u != user {
						t.Errorf("user %q, %q: hit of user %s", user, q, u)
					}
				}
				ix.putScratch(s)
			}
		}
	}
}

// BenchmarkSmallTenant loads a tenant of 100 memories of generated
// English and Chinese text, as a cold small tenant's first recall does
// (the index's part, without the store's read), and reports the
// tenant's estimated bytes (which index.max_mb counts) beside the live
// heap a thousand such tenants hold.
func BenchmarkSmallTenant(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.1, 2, 4999)
	han := []rune("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经")
	ms := make([]*engram.Memory, 100)
	for i := range ms {
		var words []string
		for range 8 + rng.IntN(24) {
			if i%2 == 0 {
				words = append(words, fmt.Sprintf("w%d", zipf.Uint64()))
			} else {
				words = append(words, string([]rune{han[rng.IntN(len(han))], han[rng.IntN(len(han))]}))
			}
		}
		ms[i] = &engram.Memory{ID: fmt.Sprintf("mem_%03d", i), Content: strings.Join(words, " "), Category: "life", Version: 1, Valid: true}
	}
	load := func() *tenant {
		t := newTenant(0)
		for _, m := range ms {
			t.put(m)
		}
		return t
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	held := make([]*tenant, 1000)
	for i := range held {
		held[i] = load()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(held))
	est := float64(held[0].estimate())
	b.ReportAllocs()
	for b.Loop() {
		load()
	}
	b.ReportMetric(est, "est-bytes/tenant")
	b.ReportMetric(heap, "heap-bytes/tenant")
	b.ReportMetric(float64(len(held[0].post)), "terms/tenant")
	b.ReportMetric(float64(held[0].nPost), "postings/tenant")
	runtime.KeepAlive(held)
}
