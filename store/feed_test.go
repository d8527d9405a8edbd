package store_test

import (
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestFeedCursors: a tenant with unapplied changes is leased to one holder
// at a time; advancing ends the lease; an expired lease can be taken over
// and resumes from the cursor.
func TestFeedCursors(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		o.Now = func() time.Time { return now }
		db := storetest.OpenWith(t, o)
		other := storetest.OpenWith(t, o) // a second server on the same database
		ctx := storetest.Tenant(t, db, "acme")
		storetest.Tenant(t, db, "idle") // no changes: never claimed
		tenant := engram.TenantFromContext(ctx)

		if _, _, ok, err := db.ClaimFeed(ctx, "c", "a", time.Minute); ok || err != nil {
			t.Fatalf("no changes yet: claimed %v (%v)", ok, err)
		}
		for _, c := range []string{"one", "two", "three"} {
			if _, err := db.CreateMemory(ctx, &engram.Memory{Content: c}); err != nil {
				t.Fatal(err)
			}
		}
		got, after, ok, err := db.ClaimFeed(ctx, "c", "a", time.Minute)
		if err != nil || !ok || got != tenant || after != 0 {
			t.Fatalf("claim: %q after %d, %v (%v)", got, after, ok, err)
		}
		if _, _, ok, _ := other.ClaimFeed(ctx, "c", "b", time.Minute); ok {
			t.Fatal("a leased tenant was claimed by a second holder")
		}
		if _, _, ok, _ := other.ClaimFeed(ctx, "another-consumer", "b", time.Minute); !ok {
			t.Fatal("each consumer has its own cursor and lease")
		}
		if err := db.AdvanceFeed(ctx, "c", "a", tenant, 2); err != nil {
			t.Fatal(err)
		}
		_, after, ok, _ = other.ClaimFeed(ctx, "c", "b", time.Minute)
		if !ok || after != 2 {
			t.Fatalf("after advancing: claimed %v at %d, want 2", ok, after)
		}
		// b dies holding the lease; once it runs out, a resumes at 2. A late
		// advance by b is ignored.
		now = now.Add(2 * time.Minute)
		_, after, ok, _ = db.ClaimFeed(ctx, "c", "a", time.Minute)
		if !ok || after != 2 {
			t.Fatalf("expired lease: claimed %v at %d", ok, after)
		}
		if err := other.AdvanceFeed(ctx, "c", "b", tenant, 3); err != nil {
			t.Fatal(err)
		}
		if err := db.AdvanceFeed(ctx, "c", "a", tenant, 3); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, _ := db.ClaimFeed(ctx, "c", "a", time.Minute); ok {
			t.Fatal("caught up, yet claimed")
		}
	})
}
