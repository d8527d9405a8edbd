package journal_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/journal"
	"github.com/engram-memory/engram/reflections"
	"github.com/engram-memory/engram/sleep"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

func newMirror(db *store.DB, dir, holder string, maxLog int64) *journal.Mirror {
	return journal.New(db, db, db, journal.Config{Dir: dir, MaxLogBytes: maxLog}, holder, slog.New(slog.DiscardHandler))
}

func setKey(t *testing.T, ctx context.Context, db *store.DB, key, content string) *engram.Memory {
	t.Helper()
	m, err := db.SetKey(ctx, engram.KeyWrite{Key: key, Content: json.RawMessage(content), Source: json.RawMessage(`"chat"`)})
	if err != nil {
		t.Fatalf("set %s: %v", key, err)
	}
	return m
}

func sync1(t *testing.T, m *journal.Mirror) {
	t.Helper()
	if err := m.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// snapshot reads every file of dir, by slash path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s is missing", what, p)
		} else if g != w {
			t.Errorf("%s: %s differs:\n got %q\nwant %q", what, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s should not be there", what, p)
		}
	}
}

func readLog(t *testing.T, path string) []journal.Envelope {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []journal.Envelope
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e journal.Envelope
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: a line is not an envelope (%v): %q", path, err, sc.Text())
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMirrorFollowsWrites(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		dir := t.TempDir()
		mir := newMirror(db, dir, "a", 1<<20)

		setKey(t, ctx, db, "/user/calendar/dentist", `{"text":"\u7259\u79d1\u590d\u8bca <b>Wed</b>","type":"reminder"}`)
		gym := setKey(t, ctx, db, "/user/calendar/gym", `"gym on Friday"`)
		setKey(t, ctx, db, "/user/.hidden/50%", `{"n":1.50}`)
		free, err := db.CreateMemory(ctx, &engram.Memory{Content: "User drinks coffee black", Category: "preference"})
		if err != nil {
			t.Fatal(err)
		}
		sync1(t, mir)

		root := filepath.Join(dir, "acme")
		entries, err := os.ReadDir(filepath.Join(root, "index", "user", "calendar"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{"dentist.json", "gym.json"}; !slices.Equal(names, want) {
			t.Fatalf("ls index/user/calendar = %q, want %q", names, want)
		}
		dentist, err := os.ReadFile(filepath.Join(root, "index", "user", "calendar", "dentist.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(dentist, []byte(`"content":{"text":"牙科复诊 <b>Wed</b>","type":"reminder"}`)) {
			t.Fatalf("index file must hold the content with its characters for grep: %s", dentist)
		}
		if _, err := os.Stat(filepath.Join(root, "index", "user", "%2Ehidden", "50%25.json")); err != nil {
			t.Fatalf("encoded key file: %v", err)
		}
		if _, err := os.Stat(filepath.Join(root, "memories", "preference", free.Memory.ID+".json")); err != nil {
			t.Fatalf("memory without a key: %v", err)
		}

		// A tombstone removes the index file (and its empty directory is
		// kept only while it holds a key); feedback-like changes that no
		// envelope shows write nothing.
		if _, err := db.DeleteMemory(ctx, gym.ID, nil); err != nil {
			t.Fatal(err)
		}
		conf := 0.9
		if _, err := db.UpdateMemory(ctx, free.Memory.ID, engram.MemoryUpdate{Confidence: &conf}); err != nil {
			t.Fatal(err)
		}
		sync1(t, mir)
		if _, err := os.Stat(filepath.Join(root, "index", "user", "calendar", "gym.json")); !os.IsNotExist(err) {
			t.Fatalf("tombstoned key still mirrored: %v", err)
		}
		log := readLog(t, filepath.Join(root, "log.jsonl"))
		if len(log) != 5 {
			t.Fatalf("log has %d envelopes, want 5 (4 writes and a tombstone)", len(log))
		}
		last := log[4]
		if last.Key != "/user/calendar/gym" || last.Valid || string(last.Content) != "null" || string(last.Source) != `"chat"` ||
			last.Action != engram.ActionTombstone {
			t.Fatalf("tombstone envelope: %+v", last)
		}
		for i, e := range log {
			if e.Seq == 0 || e.TS.IsZero() || e.ID == "" || (i > 0 && e.Seq <= log[i-1].Seq) {
				t.Fatalf("envelope %d: %+v", i, e)
			}
		}
	})
}

// An archived memory leaves the mirror; a memory that moves category
// moves file; all of it survives a rebuild unchanged.
func TestRebuildEqualsFollowing(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		dir := t.TempDir()
		mir := newMirror(db, dir, "a", 32<<10) // small: the log is archived a few times

		var batch []*engram.Memory
		for i := range 600 { // more than one page of the feed
			batch = append(batch, &engram.Memory{Content: fmt.Sprintf("note %d about topic %d", i, i%7), Category: "work"})
		}
		if _, err := db.CreateMemories(ctx, batch); err != nil {
			t.Fatal(err)
		}
		sync1(t, mir)
		for i := range 20 {
			setKey(t, ctx, db, fmt.Sprintf("/user/notes/n%02d", i%8), fmt.Sprintf(`{"text":"version %d","i":%d}`, i, i))
			if i%5 == 0 {
				sync1(t, mir)
			}
		}
		work := "work"
		list, err := db.FindMemories(ctx, engram.MemoryFilter{Category: &work, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		life, yes := "life", true
		if _, err := db.UpdateMemory(ctx, list.Items[0].ID, engram.MemoryUpdate{Category: &life}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.UpdateMemory(ctx, list.Items[1].ID, engram.MemoryUpdate{Archived: &yes}); err != nil {
			t.Fatal(err)
		}
		setKey(t, ctx, db, "/user/notes/n03", `null`)
		sync1(t, mir)

		following := snapshot(t, filepath.Join(dir, "acme"))
		if len(following) < 600 {
			t.Fatalf("only %d files", len(following))
		}
		var archives int
		for p := range following {
			if strings.HasPrefix(p, "archive/") {
				archives++
			}
		}
		if archives < 2 || following["state.jsonl"] == "" {
			t.Fatalf("want archived logs and state.jsonl, got %d archives", archives)
		}
		if _, ok := following["memories/life/"+list.Items[0].ID+".json"]; !ok {
			t.Fatal("a memory that changed category must move to its new directory")
		}
		if _, ok := following["memories/work/"+list.Items[0].ID+".json"]; ok {
			t.Fatal("… and leave the old one")
		}
		if _, ok := following["memories/work/"+list.Items[1].ID+".json"]; ok {
			t.Fatal("an archived memory is not live")
		}

		tenant, err := db.FindTenant(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		res, err := mir.Rebuild(context.Background(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		if res.Live != 600-1+7 || res.Envelopes != 600+20+3 {
			t.Fatalf("rebuild: %+v, want 606 live files and 623 envelopes", res)
		}
		sameTree(t, "rebuilt in place", snapshot(t, filepath.Join(dir, "acme")), following)

		other := t.TempDir()
		if _, err := newMirror(db, other, "b", 32<<10).Rebuild(context.Background(), tenant); err != nil {
			t.Fatal(err)
		}
		sameTree(t, "rebuilt elsewhere", snapshot(t, filepath.Join(other, "acme")), following)

		// Following goes on from the rebuilt mirror.
		setKey(t, ctx, db, "/user/notes/n99", `"after the rebuild"`)
		sync1(t, mir)
		if _, err := os.Stat(filepath.Join(dir, "acme", "index", "user", "notes", "n99.json")); err != nil {
			t.Fatal(err)
		}
	})
}

// A mirror resumes after a restart, after a crash that cut a line in half
// or lost its position, and after its directory was deleted: in each case
// it ends equal to a rebuild, with every envelope once.
func TestMirrorRecovers(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	dir := t.TempDir()
	root := filepath.Join(dir, "acme")
	setKey(t, ctx, db, "/a/one", `"1"`)
	setKey(t, ctx, db, "/a/two", `"2"`)
	sync1(t, newMirror(db, dir, "first", 1<<20))

	// Restart: a new process (holder) picks up the next writes.
	setKey(t, ctx, db, "/a/three", `"3"`)
	sync1(t, newMirror(db, dir, "second", 1<<20))

	// Crash: the position was not recorded and the last line was cut short.
	if err := os.WriteFile(filepath.Join(root, ".position"), []byte("1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(root, "log.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"key":"/a/four","ts":"2026-`); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	setKey(t, ctx, db, "/a/four", `"4"`)
	mir := newMirror(db, dir, "third", 1<<20)
	sync1(t, mir)
	log := readLog(t, filepath.Join(root, "log.jsonl"))
	var keys []string
	for _, e := range log {
		keys = append(keys, e.Key)
	}
	if want := []string{"/a/one", "/a/two", "/a/three", "/a/four"}; !slices.Equal(keys, want) {
		t.Fatalf("log keys %q, want %q", keys, want)
	}
	recovered := snapshot(t, root)

	// Deleted: the next write brings the whole mirror back.
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	setKey(t, ctx, db, "/a/five", `"5"`)
	sync1(t, mir)
	back := snapshot(t, root)
	tenant, _ := db.FindTenant(context.Background(), "acme")
	other := t.TempDir()
	if _, err := newMirror(db, other, "x", 1<<20).Rebuild(context.Background(), tenant); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "after deletion", back, snapshot(t, filepath.Join(other, "acme")))
	for p, s := range recovered {
		if p != ".position" && p != "log.jsonl" && back[p] != s {
			t.Errorf("%s changed across the deletion", p)
		}
	}
}

// Two processes on one data directory and one database, following while
// writers write: every envelope is in the log once, every line whole, and
// the result equals a rebuild.
func TestConcurrentFollowers(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		ctx2 := storetest.Tenant(t, db, "beta")
		dir := t.TempDir()
		a, b := newMirror(db, dir, "a", 16<<10), newMirror(db, dir, "b", 16<<10)

		var wg sync.WaitGroup
		stop := make(chan struct{})
		for _, m := range []*journal.Mirror{a, b} {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := m.Step(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		var writers sync.WaitGroup
		for w, c := range []context.Context{ctx, ctx, ctx2} {
			writers.Go(func() {
				for i := range 40 {
					key := fmt.Sprintf("/w%d/k%02d", w, i%15)
					content := fmt.Sprintf(`{"text":"%s","i":%d}`, strings.Repeat("长句", 20+i), i)
					if i > 15 && i%9 == 8 { // keys written before
						content = "null"
					}
					if _, err := db.SetKey(c, engram.KeyWrite{Key: key, Content: json.RawMessage(content), Source: json.RawMessage(`"w"`)}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		writers.Wait()
		close(stop)
		wg.Wait()
		sync1(t, a)

		for _, name := range []string{"acme", "beta"} {
			tenant, err := db.FindTenant(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			got := snapshot(t, filepath.Join(dir, name))
			seen := map[int64]bool{}
			for p := range got {
				if p == "log.jsonl" || strings.HasPrefix(p, "archive/") {
					for _, e := range readLog(t, filepath.Join(dir, name, p)) {
						if seen[e.Seq] {
							t.Fatalf("%s: seq %d logged twice", name, e.Seq)
						}
						seen[e.Seq] = true
					}
				}
			}
			other := t.TempDir()
			if _, err := newMirror(db, other, "x", 16<<10).Rebuild(context.Background(), tenant); err != nil {
				t.Fatal(err)
			}
			sameTree(t, name, got, snapshot(t, filepath.Join(other, name)))
		}
	})
}

// The sleep cycle's writes reach the mirror like any other: a merged near
// duplicate leaves it, the kept memory's envelope carries both sources,
// and a key past its expiry leaves index/ when the sleep archives it.
func TestSleepReachesMirror(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	dir := t.TempDir()
	mir := newMirror(db, dir, "a", 1<<20)
	base := "User drinks strong coffee black without sugar every morning at home before walking the dog to the park near the river and reading newspapers"
	var ids []string
	for i, content := range []string{base, base + " quietly"} {
		r, err := db.CreateMemory(ctx, &engram.Memory{Content: content, Category: "preference",
			Source: json.RawMessage(fmt.Sprintf(`"source-%d"`, i)), Tags: []string{"coffee"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Memory.ID)
	}
	setKey(t, ctx, db, "/user/calendar/old", `{"text":"dentist","expires_at":"2020-01-01T00:00:00Z"}`)
	sync1(t, mir)
	before := snapshot(t, filepath.Join(dir, "acme"))

	sleeper := sleep.New(db, reflections.New(db, reflections.Config{Categories: engram.DefaultRules().Memory.Categories}, nil),
		sleep.Config{MergeSimilarity: 0.9, ArchiveBelow: 0.02, CompactAfter: time.Hour, Scoring: engram.DefaultRules().Scoring}, nil)
	res, err := sleeper.Sleep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Expired != 1 || res.Merged != 1 {
		t.Fatalf("sleep: %+v", res)
	}
	sync1(t, mir)
	after := snapshot(t, filepath.Join(dir, "acme"))
	if _, ok := before["index/user/calendar/old.json"]; !ok {
		t.Fatal("the expiring key was mirrored while live")
	}
	if _, ok := after["index/user/calendar/old.json"]; ok {
		t.Fatal("the sleep archived the expired key; its index file must go")
	}
	var kept, merged string
	for _, id := range ids {
		if s, ok := after["memories/preference/"+id+".json"]; ok {
			kept = s
		} else {
			merged = id
		}
	}
	if merged == "" || !strings.Contains(kept, `"kind":"merge"`) || !strings.Contains(kept, merged) {
		t.Fatalf("after the merge one memory is left, citing the other in its source: kept %s", kept)
	}
	last := map[string]journal.Envelope{} // by memory id
	var keyID string
	for _, e := range readLog(t, filepath.Join(dir, "acme", "log.jsonl")) {
		last[e.ID] = e
		if e.Key == "/user/calendar/old" {
			keyID = e.ID
		}
	}
	if e := last[keyID]; keyID == "" || e.Valid || string(e.Content) != "null" {
		t.Fatalf("expired key's last envelope: %+v", e)
	}
	if e := last[merged]; e.ID != merged || e.Valid || e.Action != engram.ActionTombstone {
		t.Fatalf("merged memory's last envelope: %+v", e)
	}
}
