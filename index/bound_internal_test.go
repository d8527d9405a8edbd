package index

import (
	"slices"
	"testing"
)

// TestBoundDropsSmallTenantsFirst: past the memory bound the least
// recently used small tenants are dropped before a big one, a big one
// only when the small ones do not free enough, and never the one
// searching.
func TestBoundDropsSmallTenantsFirst(t *testing.T) {
	ix := New(nil, Config{MaxBytes: 1000})
	add := func(id string, bytes int64, big bool) {
		tn := ix.tenant(id)
		tn.bytes.Store(bytes)
		tn.big.Store(big)
	}
	// Least recently used first: the big tenant, then three small ones.
	add("big", 600, true)
	add("s1", 200, false)
	add("s2", 200, false)
	add("s3", 200, false)
	ix.bound("s3")
	if got := ix.Tenants(); !slices.Equal(got, []string{"s3", "s2", "big"}) {
		t.Fatalf("after 1,200 bytes of 1,000: %v; want the oldest small tenant dropped, the big one kept", got)
	}
	add("s4", 500, false)
	ix.bound("s4")
	if got := ix.Tenants(); !slices.Equal(got, []string{"s4"}) {
		t.Fatalf("after 1,500 bytes of 1,000: %v; want the small ones, then the big one, dropped", got)
	}
	add("huge", 5000, true)
	ix.bound("huge")
	if got := ix.Tenants(); !slices.Equal(got, []string{"huge"}) {
		t.Fatalf("a tenant past the bound alone: %v; want it kept while it searches", got)
	}
}
