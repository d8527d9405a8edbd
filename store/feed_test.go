package store_test

import (
	"context"
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

// TestFeedLeaseLifecycle: a lease is renewed by its holder only; a holder
// that stops releases its leases, so another takes the tenant at once;
// FeedLag counts the changes a consumer has not applied.
func TestFeedLeaseLifecycle(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		o := storetest.Options(t, engine)
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		o.Now = func() time.Time { return now }
		db := storetest.OpenWith(t, o)
		other := storetest.OpenWith(t, o)
		ctx := storetest.Tenant(t, db, "acme")
		ctx2 := storetest.Tenant(t, db, "beta")
		tenant := engram.TenantFromContext(ctx)
		create := func(c context.Context, content string) {
			t.Helper()
			if _, err := db.CreateMemory(c, &engram.Memory{Content: content}); err != nil {
				t.Fatal(err)
			}
		}
		create(ctx, "one")
		create(ctx, "two")
		if lag, err := db.FeedLag(ctx, "c"); err != nil || lag != 2 {
			t.Fatalf("lag before any cursor: %d (%v), want 2", lag, err)
		}
		got, _, ok, err := db.ClaimFeed(ctx, "c", "a", 5*time.Second)
		if err != nil || !ok || got != tenant {
			t.Fatalf("claim: %q %v (%v)", got, ok, err)
		}
		// Renewed before it runs out, the lease outlives its first term.
		now = now.Add(4 * time.Second)
		if ok, err := db.RenewFeed(ctx, "c", "a", tenant, 5*time.Second); err != nil || !ok {
			t.Fatalf("renew by the holder: %v (%v)", ok, err)
		}
		if ok, err := other.RenewFeed(ctx, "c", "b", tenant, 5*time.Second); err != nil || ok {
			t.Fatalf("renew by another holder: %v (%v)", ok, err)
		}
		now = now.Add(4 * time.Second)
		if got, _, ok, _ := other.ClaimFeed(ctx, "c", "b", 5*time.Second); ok && got == tenant {
			t.Fatal("a renewed lease was taken over")
		}
		if err := db.AdvanceFeed(ctx, "c", "a", tenant, 1); err != nil {
			t.Fatal(err)
		}
		if lag, err := db.FeedLag(ctx, "c"); err != nil || lag != 1 {
			t.Fatalf("lag after advancing to 1 of 2: %d (%v), want 1", lag, err)
		}
		// a takes acme again, then stops: b takes it at once, at 1.
		if got, _, ok, _ := db.ClaimFeed(ctx, "c", "a", 5*time.Second); !ok || got != tenant {
			t.Fatalf("claim again: %q %v", got, ok)
		}
		if err := db.ReleaseFeed(ctx, "c", "a"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := db.RenewFeed(ctx, "c", "a", tenant, 5*time.Second); ok {
			t.Fatal("a released lease was renewed")
		}
		got, after, ok, err := other.ClaimFeed(ctx, "c", "b", 5*time.Second)
		if err != nil || !ok || got != tenant || after != 1 {
			t.Fatalf("after release: %q at %d, %v (%v)", got, after, ok, err)
		}
		create(ctx2, "three") // every tenant's changes count
		if lag, err := db.FeedLag(ctx, "c"); err != nil || lag != 2 {
			t.Fatalf("lag of two tenants: %d (%v), want 2", lag, err)
		}
	})
}
