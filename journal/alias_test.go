package journal_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestMirrorListsAliases: making and removing an alias are lines of
// log.jsonl with the alias; the key's own file is left as it was.
func TestMirrorListsAliases(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		dir := t.TempDir()
		mir := newMirror(db, dir, "a", 1<<20)
		if _, err := db.SetKey(ctx, engram.KeyWrite{Key: "/user/pet", Content: json.RawMessage(`"a grey cat called Dumpling"`),
			Source: json.RawMessage(`"test"`)}); err != nil {
			t.Fatal(err)
		}
		sync1(t, mir)
		file := filepath.Join(dir, "acme", "index", "user", "pet.json")
		before, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SetAlias(ctx, "/user/cat", "/user/pet"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeleteAlias(ctx, "/user/cat"); err != nil {
			t.Fatal(err)
		}
		sync1(t, mir)
		log := readLog(t, filepath.Join(dir, "acme", "log.jsonl"))
		if len(log) != 3 {
			t.Fatalf("log has %d envelopes, want 3", len(log))
		}
		for i, action := range []string{engram.ActionAlias, engram.ActionUnalias} {
			e := log[1+i]
			if e.Action != action || e.Key != "/user/pet" || len(e.Aliases) != 1 || e.Aliases[0].Alias != "/user/cat" {
				t.Fatalf("%s envelope: %+v", action, e)
			}
		}
		after, err := os.ReadFile(file)
		if err != nil || string(after) != string(before) {
			t.Fatalf("an alias must not rewrite the key's file: %v\n%s\n%s", err, before, after)
		}
		if _, err := os.Stat(filepath.Join(dir, "acme", "index", "user", "cat.json")); !os.IsNotExist(err) {
			t.Fatalf("an alias has no file of its own: %v", err)
		}
	})
}
