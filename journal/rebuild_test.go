package journal_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/journal"
	"github.com/engram-memory/engram/store/storetest"
)

// TestRebuildAll: RebuildAll rebuilds every tenant, or only the named
// one, reporting each result; a name that is no tenant is ENOTFOUND.
func TestRebuildAll(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		for _, name := range []string{"acme", "beta"} {
			setKey(t, storetest.Tenant(t, db, name), db, "/user/name", `"`+name+`"`)
		}
		dir := t.TempDir()
		mir := newMirror(db, dir, "a", 1<<20)
		rebuilt := func(only string) ([]string, error) {
			var names []string
			err := mir.RebuildAll(context.Background(), only, func(r *journal.RebuildResult) error {
				names = append(names, r.Tenant)
				return nil
			})
			return names, err
		}
		all, err := rebuilt("")
		if err != nil || !slices.Contains(all, "acme") || !slices.Contains(all, "beta") {
			t.Fatalf("every tenant: %v, %v", all, err)
		}
		for _, name := range []string{"acme", "beta"} {
			if _, err := os.Stat(filepath.Join(dir, name, "index", "user", "name.json")); err != nil {
				t.Errorf("%s not rebuilt: %v", name, err)
			}
		}
		if one, err := rebuilt("beta"); err != nil || !slices.Equal(one, []string{"beta"}) {
			t.Errorf("only beta: %v, %v", one, err)
		}
		if none, err := rebuilt("nope"); engram.ErrorCode(err) != engram.ENOTFOUND || len(none) != 0 {
			t.Errorf("no such tenant: %v, %v", none, err)
		}
	})
}
