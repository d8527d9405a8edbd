//go:build unix

package journal_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engram-memory/engram/store/storetest"
)

// A server stopped while its mirror works on a tenant (here: waiting for
// the tenant's lock, which engram mirror rebuild holds) releases the
// tenant's lease: the next process takes the tenant at once, not when a
// lease runs out.
func TestMirrorReleasesItsLeaseOnStop(t *testing.T) {
	storetest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := storetest.Open(t, engine)
		ctx := storetest.Tenant(t, db, "acme")
		dir := t.TempDir()
		setKey(t, ctx, db, "/a/one", `"1"`)
		sync1(t, newMirror(db, dir, "first", 1<<20))

		lock, err := os.OpenFile(filepath.Join(dir, ".acme.lock"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Close()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		setKey(t, ctx, db, "/a/two", `"2"`)
		stopped := newMirror(db, dir, "stopped", 1<<20)
		run, stop := context.WithCancel(context.Background())
		var done sync.WaitGroup
		done.Go(func() { stopped.Run(run, 10*time.Millisecond) })
		time.Sleep(300 * time.Millisecond) // it claims the tenant and waits for the lock
		stop()
		done.Wait()
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
			t.Fatal(err)
		}

		next := newMirror(db, dir, "next", 1<<20)
		if worked, err := next.Step(context.Background()); !worked || err != nil {
			t.Fatalf("the next process must take the tenant at once: worked %v, %v", worked, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "acme", "index", "a", "two.json")); err != nil {
			t.Fatal(err)
		}
	})
}
