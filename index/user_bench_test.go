package index

import (
	"fmt"
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
