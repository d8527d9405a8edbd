//go:build unix

package store

import (
	"context"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"
)

// TestWriterQueue: two stores on one SQLite file take turns through the
// flock of <database>-writer.lock. A write transaction of one holds it
// until it ends, a statement outside a transaction holds it while it
// runs, the other store's write waits for the turn and then succeeds, and
// nothing holds it once both are idle.
func TestWriterQueue(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/e.db"
	open := func() *DB {
		db, err := Open(ctx, Options{Driver: "sqlite", DSN: path, Tokens: internalTokens(t), BusyTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	a, b := open(), open()
	probe, err := os.OpenFile(path+writerLockSuffix, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("no lock file beside the database: %v", err)
	}
	defer probe.Close()
	free := func() bool {
		if err := syscall.Flock(int(probe.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return false
		}
		_ = syscall.Flock(int(probe.Fd()), syscall.LOCK_UN)
		return true
	}
	if !free() {
		t.Fatal("the queue is held by idle stores")
	}

	inTx, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		err := a.w.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec(`INSERT INTO settings (name, value) VALUES ('queue-a', 'a')`).Error; err != nil {
				return err
			}
			close(inTx)
			<-release
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	})
	<-inTx
	if free() {
		t.Error("a write transaction runs without holding the queue")
	}
	written := make(chan error, 1)
	go func() {
		written <- b.w.Exec(`INSERT INTO settings (name, value) VALUES ('queue-b', 'b')`).Error
	}()
	select {
	case err := <-written:
		t.Fatalf("the second store wrote while the first held the queue: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	if err := <-written; err != nil {
		t.Fatalf("the second store's write after its turn: %v", err)
	}
	if !free() {
		t.Error("the queue is still held once both stores are idle")
	}
	var n int64
	if err := b.r.Raw(`SELECT COUNT(*) FROM settings WHERE name IN ('queue-a', 'queue-b')`).Row().Scan(&n); err != nil || n != 2 {
		t.Errorf("%d of the two writes stored (%v)", n, err)
	}
}

// TestWriterQueueGivesUp: a turn waited for longer than the busy timeout
// is given up: the write runs under SQLite's own locking alone (here
// SQLite is free, so it succeeds), and the flock it queued for, granted
// later, is released rather than kept by an idle store.
func TestWriterQueueGivesUp(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/e.db"
	db, err := Open(ctx, Options{Driver: "sqlite", DSN: path, Tokens: internalTokens(t), BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holder, err := os.OpenFile(path+writerLockSuffix, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := db.w.Exec(`INSERT INTO settings (name, value) VALUES ('gave-up', 'x')`).Error; err != nil {
		t.Fatalf("a write whose turn did not come within the busy timeout: %v", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("the write waited %v for a held queue, not the busy timeout", waited)
	}
	if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the flock granted after the store gave up waiting was kept")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Flock(int(holder.Fd()), syscall.LOCK_UN)
	if err := db.w.Exec(`INSERT INTO settings (name, value) VALUES ('after', 'y')`).Error; err != nil {
		t.Fatalf("a write once the queue is free: %v", err)
	}
}
