package journal_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/journal"
	"github.com/engram-memory/engram/store/storetest"
)

// A tenant past mirror.max_files is mirrored in log.jsonl and archive/
// only: its index/ and memories/ files and state.jsonl go, NOTICE.txt
// says why, the status names it, and a rebuild writes the same. Under
// the budget again, a rebuild brings the files back.
func TestMirrorFileBudget(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		dir := t.TempDir()
		cfg := journal.Config{Dir: dir, MaxLogBytes: 4096, MaxFiles: 20}
		mir := mirrorWith(db, cfg, "a")
		root := filepath.Join(dir, "acme")

		var ids []string
		for i := range 18 {
			r, err := db.CreateMemory(ctx, &engram.Memory{Content: fmt.Sprintf("note %d: %s", i, strings.Repeat("y", 300)), Category: "work"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.Memory.ID)
		}
		setKey(t, ctx, db, "/user/a", `"a"`)
		sync1(t, mir)
		under := snapshot(t, root)
		if countFiles(t, filepath.Join(root, "memories")) != 18 || under["state.jsonl"] == "" || under[".position"] == "" {
			t.Fatalf("under the budget every live memory has its file: %d files", len(under))
		}
		if _, ok := under["NOTICE.txt"]; ok {
			t.Fatal("NOTICE.txt under the budget")
		}

		setKey(t, ctx, db, "/user/b", `"b"`)
		setKey(t, ctx, db, "/user/c", `"c"`) // the 21st live memory
		setKey(t, ctx, db, "/user/d", `"d"`)
		sync1(t, mir)
		over := snapshot(t, root)
		for p := range over {
			if strings.HasPrefix(p, "index/") || strings.HasPrefix(p, "memories/") || p == "state.jsonl" {
				t.Fatalf("past the budget %s is still there", p)
			}
		}
		if !strings.Contains(over["NOTICE.txt"], "mirror.max_files") || !strings.Contains(over["NOTICE.txt"], "engram mirror rebuild --tenant acme") {
			t.Fatalf("NOTICE.txt: %q", over["NOTICE.txt"])
		}
		if !strings.HasSuffix(over[".position"], " 22 log-only\n") {
			t.Fatalf(".position: %q", over[".position"])
		}
		logged := 0
		for p := range over {
			if p == "log.jsonl" || strings.HasPrefix(p, "archive/") {
				logged += len(readLog(t, filepath.Join(root, p)))
			}
		}
		if logged != 22 {
			t.Fatalf("the log goes on: %d envelopes, want 22", logged)
		}
		if st := mir.Status(); st.OverBudget != 1 {
			t.Fatalf("status: %+v", st)
		}
		tenant, err := db.FindTenant(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		other := t.TempDir()
		res, err := mirrorWith(db, journal.Config{Dir: other, MaxLogBytes: 4096, MaxFiles: 20}, "x").Rebuild(context.Background(), tenant)
		if err != nil || !res.LogOnly || res.Live != 0 {
			t.Fatalf("rebuild past the budget: %+v %v", res, err)
		}
		sameTree(t, "rebuilt past the budget", snapshot(t, filepath.Join(other, "acme")), over)

		// Back under the budget: following stays log-only; a rebuild
		// writes the files again, and following keeps them.
		for _, id := range ids[:5] {
			if _, err := db.DeleteMemory(ctx, id, nil); err != nil {
				t.Fatal(err)
			}
		}
		sync1(t, mir)
		if _, err := os.Stat(filepath.Join(root, "memories")); !os.IsNotExist(err) {
			t.Fatalf("following stays log-only: %v", err)
		}
		if res, err := mir.Rebuild(context.Background(), tenant); err != nil || res.LogOnly || res.Live != 17 {
			t.Fatalf("rebuild under the budget: %+v %v", res, err)
		}
		setKey(t, ctx, db, "/user/e", `"e"`)
		sync1(t, mir)
		back := snapshot(t, root)
		if _, ok := back["index/user/e.json"]; !ok || back["NOTICE.txt"] != "" || mir.Status().OverBudget != 0 {
			t.Fatalf("after the rebuild under the budget: %d files, notice %q, status %+v", len(back), back["NOTICE.txt"], mir.Status())
		}
	})
}

// A mirror written before the budget recorded its count (".position"
// holding the sequence alone) counts its files once and goes on.
func TestPositionWithoutCount(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	dir := t.TempDir()
	for i := range 3 {
		setKey(t, ctx, db, fmt.Sprintf("/k/%d", i), `"v"`)
	}
	sync1(t, mirrorWith(db, journal.Config{Dir: dir, MaxLogBytes: 1 << 20}, "a"))
	pos := filepath.Join(dir, "acme", ".position")
	if err := os.WriteFile(pos, []byte("3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	setKey(t, ctx, db, "/k/3", `"v"`)
	sync1(t, mirrorWith(db, journal.Config{Dir: dir, MaxLogBytes: 1 << 20, MaxFiles: 3}, "b"))
	if b, _ := os.ReadFile(pos); string(b) != "4 4 log-only\n" {
		t.Fatalf(".position: %q", b)
	}
}
