package journal_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestMirrorListsLinks: a link and an unlink are lines of log.jsonl with
// the links; the memory's own file is left as its last content change.
func TestMirrorListsLinks(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		dir := t.TempDir()
		mir := newMirror(db, dir, "a", 1<<20)
		cat, err := db.CreateMemory(ctx, &engram.Memory{Content: "We adopted a grey cat called Dumpling", Category: "life"})
		if err != nil {
			t.Fatal(err)
		}
		food, err := db.CreateMemory(ctx, &engram.Memory{Content: "She only eats salmon kibble", Category: "life"})
		if err != nil {
			t.Fatal(err)
		}
		sync1(t, mir)
		file := filepath.Join(dir, "acme", "memories", "life", food.Memory.ID+".json")
		before, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateLink(ctx, engram.Link{From: food.Memory.ID, To: cat.Memory.ID, Relation: "mentions"}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeleteLink(ctx, food.Memory.ID, cat.Memory.ID, ""); err != nil {
			t.Fatal(err)
		}
		sync1(t, mir)
		log := readLog(t, filepath.Join(dir, "acme", "log.jsonl"))
		if len(log) != 4 {
			t.Fatalf("log has %d envelopes, want 4", len(log))
		}
		for i, action := range []string{engram.ActionLink, engram.ActionUnlink} {
			e := log[2+i]
			if e.Action != action || len(e.Links) != 1 || e.Links[0].To != cat.Memory.ID || e.Links[0].Relation != "mentions" {
				t.Fatalf("%s envelope: %+v", action, e)
			}
		}
		after, err := os.ReadFile(file)
		if err != nil || string(after) != string(before) {
			t.Fatalf("a link must not rewrite the memory's file: %v\n%s\n%s", err, before, after)
		}
	})
}
