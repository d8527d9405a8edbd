package router_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/router"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// countingFeed is the store's feed, counting the full reads of a tenant.
type countingFeed struct {
	*store.DB
	loads int
}

func (f *countingFeed) EachLive(ctx context.Context, fn func(*engram.Memory) error) (int64, error) {
	f.loads++
	return f.DB.EachLive(ctx, fn)
}

var snapQueries = []string{"how is the Falcon cutover going", "what should we cook for dinner",
	"Nimbus 发布 进度", "anything about the harbour trip", "what does ann like"}

// routes returns the routes of snapQueries.
func routes(t *testing.T, svc *router.Service, ctx context.Context) []*engram.Route {
	t.Helper()
	var out []*engram.Route
	for _, q := range snapQueries {
		rt, err := svc.RouteQuery(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rt)
	}
	return out
}

// TestRouterSnapshot: a big tenant's model is written to a snapshot file
// after its load from the store; a fresh service loads it from the file
// without reading the tenant and then follows the feed, routing as a
// model rebuilt from the store does. A broken file, one of another
// version and one whose feed cursor the feed no longer continues
// (an end user forgotten) are left for the store, and Forget deletes the
// file. Both engines.
func TestRouterSnapshot(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "snap")
		texts := map[string][]string{
			"work": {"Falcon migration cutover", "Falcon sprint review notes", "Nimbus 发布 计划 评审"},
			"life": {"dinner recipes for the week", "harbour trip with the kids", "我 喜欢 周末 做饭"},
		}
		var seed []*engram.Memory
		for i := 0; len(seed) < 5200; i++ {
			for cat, ts := range texts {
				seed = append(seed, &engram.Memory{Category: cat, Content: fmt.Sprintf("%s %d", ts[i%len(ts)], i)})
			}
		}
		for i := 0; i < 20; i++ {
			seed = append(seed, &engram.Memory{Category: "preference", UserID: "ann",
				Content: fmt.Sprintf("ann prefers oolong zeppelins %d", i)})
		}
		if err := db.SeedMemories(ctx, seed); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		file := filepath.Join(dir, engram.TenantFromContext(ctx)+".router")
		open := func() (*router.Service, *countingFeed) {
			feed := &countingFeed{DB: db}
			return router.NewService(router.New(router.DefaultConfig()), feed, 0).WithSnapshots(dir, nil), feed
		}
		// expect routes with a fresh service on a fresh snapshot file (or
		// the store), and compares with a model rebuilt from the store.
		expect := func(stage string, loads int) {
			t.Helper()
			svc, feed := open()
			got := routes(t, svc, ctx)
			svc.Close()
			rebuilt := router.NewService(router.New(router.DefaultConfig()), db, 0)
			if want := routes(t, rebuilt, ctx); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: routes %+v, rebuilt from the store %+v", stage, got, want)
			}
			if feed.loads != loads {
				t.Errorf("%s: %d loads from the store, want %d", stage, feed.loads, loads)
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s: no snapshot file after the route: %v", stage, err)
			}
		}
		expect("first load", 1)

		// Changes after the file's cursor are followed from the feed.
		if _, err := db.CreateMemories(ctx, []*engram.Memory{
			{Category: "work", Content: "Falcon cutover dry run went fine"},
			{Category: "life", Content: "harbour picnic on Sunday"},
		}); err != nil {
			t.Fatal(err)
		}
		expect("from the file", 0)

		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		flipped := append([]byte(nil), b...)
		flipped[len(flipped)/2] ^= 0x55
		if err := os.WriteFile(file, flipped, 0o600); err != nil {
			t.Fatal(err)
		}
		expect("broken file", 1)
		if err := os.WriteFile(file, append([]byte("engram-router-9\n"), b[16:]...), 0o600); err != nil {
			t.Fatal(err)
		}
		expect("unknown version", 1)
		stale, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}

		// An end user forgotten: the feed skips a sequence number, so a
		// file from before (which still holds ann's words) is not followed
		// past the next change.
		if _, _, err := db.ForgetUser(ctx, "ann"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateMemories(ctx, []*engram.Memory{{Category: "work", Content: "Nimbus 发布 推迟"}}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, stale, 0o600); err != nil {
			t.Fatal(err)
		}
		expect("stale cursor", 1)
		if now, err := os.ReadFile(file); err != nil || string(now) == string(stale) {
			t.Errorf("stale file kept (%v)", err)
		}
		expect("rewritten after the stale one", 0)

		svc, _ := open()
		routes(t, svc, ctx)
		if err := svc.Forget(ctx); err != nil {
			t.Fatal(err)
		}
		svc.Close()
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			t.Errorf("file after Forget: %v", err)
		}
	})
}

// TestRouterSnapshotSmallTenant: a tenant below the size that keeps a
// snapshot writes none, and a service without a directory writes none.
func TestRouterSnapshotSmallTenant(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "small")
		if _, err := db.CreateMemories(ctx, []*engram.Memory{{Category: "work", Content: "Falcon migration cutover"}}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		svc := router.NewService(router.New(router.DefaultConfig()), db, 0).WithSnapshots(dir, nil)
		routes(t, svc, ctx)
		svc.Close()
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Errorf("small tenant's directory: %v %v", entries, err)
		}
	})
}
