package index_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/index"
	"github.com/engram-memory/engram/store/storetest"
)

// Preload loads the tenants with snapshot files, the most recently written
// first, within half the memory bound, and calls warm for each; other
// files are left alone, and an ended context stops it.
func TestPreload(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		dir := t.TempDir()
		var tenants []string
		for i, name := range []string{"acme", "beta"} {
			ctx := storetest.Tenant(t, db, name)
			fill(t, db, ctx, name+" ", 30)
			ix := index.New(db, index.Config{Dir: dir})
			if err := ix.Snapshot(ctx); err != nil {
				t.Fatal(err)
			}
			id := engram.TenantFromContext(ctx)
			at := time.Now().Add(time.Duration(i-5) * time.Minute)
			if err := os.Chtimes(filepath.Join(dir, id+".idx"), at, at); err != nil {
				t.Fatal(err)
			}
			tenants = append(tenants, id)
		}
		for _, name := range []string{"bad name.idx", "notes.txt"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ix := index.New(db, index.Config{Dir: dir})
		var warmed []string
		n, err := ix.Preload(context.Background(), func(ctx context.Context) error {
			warmed = append(warmed, engram.TenantFromContext(ctx))
			return nil
		})
		want := []string{tenants[1], tenants[0]}
		if err != nil || n != 2 || !slices.Equal(warmed, want) || !slices.Equal(ix.Tenants(), []string{tenants[0], tenants[1]}) {
			t.Fatalf("preloaded %d %v, warmed %v, in memory %v; want %v", n, err, warmed, ix.Tenants(), want)
		}
		if n, err := index.New(db, index.Config{Dir: dir, MaxBytes: 1}).Preload(context.Background(), nil); err != nil || n != 1 {
			t.Fatalf("within a bound of one byte: %d %v, want the newest alone", n, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if n, err := index.New(db, index.Config{Dir: dir}).Preload(ctx, nil); err == nil || n != 0 {
			t.Fatalf("an ended context: %d %v", n, err)
		}
		if n, err := index.New(db, index.Config{Dir: filepath.Join(dir, "none")}).Preload(context.Background(), nil); err != nil || n != 0 {
			t.Fatalf("no directory: %d %v", n, err)
		}
	})
}
