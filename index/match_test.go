package index_test

import (
	"math"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/store/storetest"
)

// TestSearchMatch: a hit's Match is the share of the query's weight it
// holds: 1 for a memory with every query term, less for one with some,
// lowered by a term no memory holds, untouched by a date the query names
// and by a Chinese bigram that straddles two words.
func TestSearchMatch(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ix := index.New(db, index.Config{RowCache: 100})
		ctx := storetest.Tenant(t, db, "match")
		for _, c := range []string{
			"Caroline went to the LGBTQ support group", "Caroline painted a sunrise at the lake",
			"Melanie runs a pottery class", "我喜欢喝燕麦拿铁咖啡", "The quarterly report is due Friday",
		} {
			mustCreate(t, db, ctx, &engram.Memory{Content: c, Category: "life"})
		}
		match := func(query, content string) float64 {
			t.Helper()
			for _, h := range search(t, ix, ctx, query) {
				if h.Memory.Content == content {
					if !(h.Match >= 0 && h.Match <= 1) {
						t.Fatalf("%q: match %v out of [0, 1]", query, h.Match)
					}
					return h.Match
				}
			}
			t.Fatalf("%q did not find %q", query, content)
			return 0
		}
		const group = "Caroline went to the LGBTQ support group"
		if m := match("Caroline support group", group); math.Abs(m-1) > 1e-9 {
			t.Errorf("every term held: match %v, want 1", m)
		}
		part := match("Caroline support group lake", group)
		if !(part > 0.3 && part < 1) {
			t.Errorf("three of four terms: match %v", part)
		}
		if m := match("Caroline support group telescope", group); !(m < 1 && m > 0.3) {
			t.Errorf("a term nobody wrote: match %v, want below 1", m)
		}
		if a, b := match("Caroline support group on 8 May, 2023", group), match("Caroline support group", group); math.Abs(a-b) > 1e-9 {
			t.Errorf("a date in the query moved the match: %v, want %v", a, b)
		}
		if m := match("Friday", "The quarterly report is due Friday"); math.Abs(m-1) > 1e-9 {
			t.Errorf("a query of a weekday alone: match %v, want 1", m)
		}
		if m := match("我想喝咖啡", "我喜欢喝燕麦拿铁咖啡"); !(m > 0.9) {
			t.Errorf("Chinese query: match %v; straddling bigrams must not weigh", m)
		}
		// Nothing in the query weighs (an unknown bigram and a weekday):
		// match 0, not NaN.
		if m := match("想喝 Friday", "The quarterly report is due Friday"); m != 0 {
			t.Errorf("a query that weighs nothing: match %v, want 0", m)
		}
	})
}
