package store

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCheckpointRestartsLog: under a writer that never pauses and readers
// that never stop, the write-ahead log still starts over from its
// beginning once it holds walRestartFrames frames, so its file stays
// bounded. A passive checkpoint alone never lets it start over: the
// writer appends frames while each one runs, so no checkpoint ever
// copies the whole log, and the file grew by every byte written (3 GB
// in twenty seconds of feedback).
func TestCheckpointRestartsLog(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := Open(ctx, Options{Driver: "sqlite", DSN: dir + "/e.db", Tokens: internalTokens(t), MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.w.Exec(`CREATE TABLE ckpt_load (id INTEGER PRIMARY KEY, body BLOB)`).Error; err != nil {
		t.Fatal(err)
	}
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
	// Four times the restart threshold, a transaction of 16 pages each,
	// each row rewritten in turn so that the database stays small, at
	// half the threshold per checkpoint interval at most, so the log
	// grows by that much at most between two looks at it.
	body := make([]byte, 64<<10)
	const pageSize = 4096
	total := 4 * walRestartFrames * pageSize
	perWrite := checkpointInterval * time.Duration(2*len(body)) / time.Duration(walRestartFrames*pageSize)
	start := time.Now()
	for written := 0; written < total; written += len(body) {
		if err := db.w.Exec(`INSERT OR REPLACE INTO ckpt_load (id, body) VALUES (?, ?)`, written/len(body)%32, body).Error; err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(start.Add(perWrite * time.Duration(written/len(body)+1))))
	}
	stop.Store(true)
	readers.Wait()
	st, err := os.Stat(dir + "/e.db-wal")
	if err != nil {
		t.Fatal(err)
	}
	if limit := int64(3 * walRestartFrames * pageSize); st.Size() > limit {
		t.Errorf("the write-ahead log is %d bytes after %d bytes written; want at most %d", st.Size(), total, limit)
	}
}
