package store

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// walTestPage is SQLite's default page size, a frame of the log.
const walTestPage = 4096

// openWALTest opens a SQLite store in dir with a table of blobs to write,
// with the busy timeout the server and storetest open it with: without
// one, the writer's BEGIN failed "database is locked" about once in
// eight runs, restarts or not (a lock SQLite holds for a moment in WAL
// mode, which the busy handler waits out).
func openWALTest(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(context.Background(), Options{Driver: "sqlite", DSN: dir + "/e.db", Tokens: internalTokens(t), MaxOpenConns: 4, BusyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.w.Exec(`CREATE TABLE ckpt_load (id INTEGER PRIMARY KEY, body BLOB)`).Error; err != nil {
		t.Fatal(err)
	}
	return db
}

// writeWAL writes about total bytes to the log, 64 KiB a transaction,
// rewriting 32 rows in turn so that the database stays small; at most
// half of walRestartFrames per checkpoint interval when paced, so the log
// grows by that much at most between two looks of the checkpointer.
func writeWAL(t *testing.T, db *DB, total int, paced bool) {
	t.Helper()
	body := make([]byte, 64<<10)
	perWrite := checkpointInterval * time.Duration(2*len(body)) / time.Duration(walRestartFrames*walTestPage)
	start := time.Now()
	for written := 0; written < total; written += len(body) {
		if err := db.w.Exec(`INSERT OR REPLACE INTO ckpt_load (id, body) VALUES (?, ?)`, written/len(body)%32, body).Error; err != nil {
			t.Fatal(err)
		}
		if paced {
			time.Sleep(time.Until(start.Add(perWrite * time.Duration(written/len(body)+1))))
		}
	}
}

func walSize(t *testing.T, dir string) int64 {
	t.Helper()
	st, err := os.Stat(dir + "/e.db-wal")
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestCheckpointRestartsLog: under a writer that never pauses for long
// and readers that never stop, the write-ahead log still starts over
// from its beginning once it holds walRestartFrames frames, so its file
// stays bounded. A passive checkpoint alone never lets it start over: the
// writer appends frames while each one runs, so no checkpoint ever
// copies the whole log, and the file grew by every byte written (3 GB
// in twenty seconds of feedback).
func TestCheckpointRestartsLog(t *testing.T) {
	dir := t.TempDir()
	db := openWALTest(t, dir)
	var stop atomic.Bool
	var readers sync.WaitGroup
	for range 3 {
		readers.Go(func() {
			for !stop.Load() {
				var n int64
				_ = db.r.Raw(`SELECT COUNT(*) FROM ckpt_load`).Row().Scan(&n)
			}
		})
	}
	total := 3 * walRestartFrames * walTestPage
	writeWAL(t, db, total, true)
	stop.Store(true)
	readers.Wait()
	if size, limit := walSize(t, dir), int64(3*walRestartFrames*walTestPage); size > limit {
		t.Errorf("the write-ahead log is %d bytes after %d bytes written; want at most %d", size, total, limit)
	}
}

// TestCheckpointCutsLongLog: a reader that holds an old snapshot keeps
// the checkpointer from trying a restart (which would hold every write
// back while it waited for that reader in vain); the log that grew past
// walSizeLimit behind it is cut back to that limit once it starts over.
func TestCheckpointCutsLongLog(t *testing.T) {
	dir := t.TempDir()
	db := openWALTest(t, dir)
	reader := db.r.Begin()
	var n int64
	if err := reader.Raw(`SELECT COUNT(*) FROM ckpt_load`).Row().Scan(&n); err != nil {
		t.Fatal(err)
	}
	for walSize(t, dir) <= walSizeLimit {
		writeWAL(t, db, 1<<20, false)
	}
	time.Sleep(2 * checkpointInterval)
	if n := db.checkpoints.restarts.Load(); n != 0 {
		t.Errorf("%d restarts tried behind a reader holding an old snapshot; want none", n)
	}
	reader.Rollback()
	// The first checkpoint after the reader left copies the whole long
	// log, which on a loaded machine takes several intervals: write on,
	// paced, until the log has started over or a generous deadline.
	deadline := time.Now().Add(50 * checkpointInterval)
	for {
		writeWAL(t, db, walRestartFrames*walTestPage/2, true)
		if db.checkpoints.restarts.Load() > 0 && walSize(t, dir) <= walSizeLimit || time.Now().After(deadline) {
			break
		}
	}
	if size := walSize(t, dir); size > walSizeLimit {
		t.Errorf("the write-ahead log is %d bytes once the reader left; want at most %d", size, walSizeLimit)
	}
	if db.checkpoints.restarts.Load() == 0 {
		t.Error("no restart tried once the reader left")
	}
}

// TestCheckpointRestartSkipsBusyWriter: a restart that finds the writer
// in a long transaction gives up after a checkpoint interval rather than
// wait for it (holding the checkpointer, and the store's Close, behind
// an import), and tries again at a later tick.
func TestCheckpointRestartSkipsBusyWriter(t *testing.T) {
	db := openWALTest(t, t.TempDir())
	tx := db.w.Begin()
	defer tx.Rollback()
	if err := tx.Exec(`INSERT INTO ckpt_load (id, body) VALUES (1, x'00')`).Error; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- db.checkpoints.restart() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("restart beside a busy writer: %v", err)
		}
	case <-time.After(10 * checkpointInterval):
		t.Fatal("the restart still waits for the writer's transaction")
	}
}
