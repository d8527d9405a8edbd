package journal_test

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/feed"
	"github.com/engram-memory/engram/journal"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// disk is a file system of a given size that fills as the mirror writes,
// and fails writes with fail when set (a quota, or another process that
// took the last blocks between the check and the write).
type disk struct {
	mu       sync.Mutex
	size     int64
	used     int64
	minFree  int64 // the least free space seen
	writes   int   // writes that went through
	attempts int   // writes tried
	fail     error
}

func newDisk(size int64) *disk { return &disk{size: size, minFree: size} }

func (d *disk) volume() journal.FakeVolume {
	return journal.FakeVolume{
		Free: func() uint64 {
			d.mu.Lock()
			defer d.mu.Unlock()
			return uint64(max(d.size-d.used, 0))
		},
		Write: func(name string, n int) error {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.attempts++
			if d.fail != nil {
				return d.fail
			}
			if int64(n) > d.size-d.used {
				return syscall.ENOSPC
			}
			d.used += int64(n)
			d.writes++
			d.minFree = min(d.minFree, d.size-d.used)
			return nil
		},
	}
}

// set changes the disk under the lock: f sees it.
func (d *disk) set(f func(d *disk)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d)
}

func (d *disk) get() disk {
	d.mu.Lock()
	defer d.mu.Unlock()
	return disk{size: d.size, used: d.used, minFree: d.minFree, writes: d.writes, attempts: d.attempts}
}

func mirrorWith(db *store.DB, cfg journal.Config, holder string) *journal.Mirror {
	return journal.New(db, db, db, cfg, holder, slog.New(slog.DiscardHandler))
}

func createN(t *testing.T, ctx context.Context, db *store.DB, n int, what string) {
	t.Helper()
	var batch []*engram.Memory
	for i := range n {
		batch = append(batch, &engram.Memory{Content: fmt.Sprintf("%s %d: %s", what, i, strings.Repeat("x", 200)), Category: "work"})
	}
	if _, err := db.CreateMemories(ctx, batch); err != nil {
		t.Fatal(err)
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// A write error (ENOSPC, EDQUOT, EIO) backs the mirror off, growing the
// wait, and the status says so (its cause only: no path); once the operator frees a little space
// the mirror still waits until mirror.min_free_bytes is free, so it does
// not take back what was freed; with room again it catches up.
func TestMirrorBacksOffOnFullDisk(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	dir := t.TempDir()
	const margin = 64 << 10
	d := newDisk(100 << 20)
	d.set(func(d *disk) { d.fail = &os.PathError{Op: "write", Path: "log.jsonl", Err: syscall.ENOSPC} })
	mir := mirrorWith(db, journal.Config{Dir: dir, MaxLogBytes: 1 << 20, MinFreeBytes: margin}, "a")
	journal.SetVolume(mir, d.volume())
	createN(t, ctx, db, 200, "note")

	run, stop := context.WithCancel(context.Background())
	var done sync.WaitGroup
	done.Go(func() { mir.Run(run, 10*time.Millisecond) })
	defer func() { stop(); done.Wait() }()
	waitUntil(t, "the first failure", func() bool { return mir.Status().Errors > 0 })
	time.Sleep(600 * time.Millisecond)
	st := mir.Status()
	if st.State != feed.StateBackingOff || st.LastError != "no space left on device" || st.Backoff < 40*time.Millisecond || st.Lag != 200 {
		t.Fatalf("status on a full disk: %+v", st)
	}
	if a := d.get().attempts; a > 10 {
		t.Fatalf("%d write attempts in 600 ms with a 10 ms poll: retried in a loop, not backing off", a)
	}

	// A few kilobytes are freed: below the margin nothing is written.
	d.set(func(d *disk) { d.fail, d.used = nil, d.size-margin/2 })
	time.Sleep(time.Second)
	if g := d.get(); g.writes != 0 {
		t.Fatalf("the mirror wrote %d times into the space just freed, below its margin", g.writes)
	}
	if st := mir.Status(); st.State != feed.StateBackingOff || st.LastError != "waiting for disk space" {
		t.Fatalf("status below the margin: %+v", st)
	}

	// Room again: the mirror catches up, and says so.
	d.set(func(d *disk) { d.used = 0 })
	waitUntil(t, "catching up", func() bool {
		st := mir.Status()
		return st.State == feed.StateOK && st.Lag == 0 && countFiles(t, filepath.Join(dir, "acme", "memories")) == 200
	})
}

// Catching up a backlog stops where the disk would fall below the
// margin, and leaves files a later run completes exactly.
func TestMirrorKeepsItsMargin(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	dir := t.TempDir()
	const margin = 1 << 20
	d := newDisk(margin + 40<<10)
	mir := mirrorWith(db, journal.Config{Dir: dir, MaxLogBytes: 1 << 20, MinFreeBytes: margin}, "a")
	journal.SetVolume(mir, d.volume())
	createN(t, ctx, db, 300, "note")
	err := mir.Sync(context.Background())
	if err == nil || !strings.Contains(err.Error(), "waiting for disk space") {
		t.Fatalf("a backlog larger than the room above the margin: %v", err)
	}
	g := d.get()
	if g.minFree < margin || g.writes == 0 {
		t.Fatalf("free space went to %d, below the margin %d (%d writes)", g.minFree, margin, g.writes)
	}
	if n := countFiles(t, filepath.Join(dir, "acme", "memories")); n == 0 || n >= 300 {
		t.Fatalf("%d of 300 files written", n)
	}
	d.set(func(d *disk) { d.size = 1 << 40 })
	if err := mir.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	tenant, _ := db.FindTenant(context.Background(), "acme")
	other := t.TempDir()
	if _, err := newMirror(db, other, "x", 1<<20).Rebuild(context.Background(), tenant); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "after the disk had room again", snapshot(t, filepath.Join(dir, "acme")), snapshot(t, filepath.Join(other, "acme")))
}

// The margin is measured before the mirror's directory exists, on the
// file system that will hold it.
func TestMarginBeforeTheFirstWrite(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := storetest.Tenant(t, db, "acme")
	dir := filepath.Join(t.TempDir(), "not", "yet")
	setKey(t, ctx, db, "/a", `"a"`)
	if err := mirrorWith(db, journal.Config{Dir: dir, MaxLogBytes: 1 << 20, MinFreeBytes: 1}, "a").Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	setKey(t, ctx, db, "/b", `"b"`)
	huge := mirrorWith(db, journal.Config{Dir: filepath.Join(t.TempDir(), "x"), MaxLogBytes: 1 << 20, MinFreeBytes: 1 << 62}, "b")
	if err := huge.Sync(context.Background()); err == nil || !strings.Contains(err.Error(), "waiting for disk space") {
		t.Fatalf("a margin no disk has: %v", err)
	}
}
