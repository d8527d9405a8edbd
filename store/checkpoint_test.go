package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store/storetest"
)

// TestCheckpointOffWriter: with SQLite's automatic checkpoint off on the
// writer, the store's own checkpointer still copies the write-ahead log
// into the database file while the store is open, so the log does not
// grow without end and the file holds what was written.
func TestCheckpointOffWriter(t *testing.T) {
	o := storetest.Options(t, "sqlite")
	db := storetest.OpenWith(t, o)
	ctx := storetest.Tenant(t, db, "ckpt")
	file := filepath.Join(o.DataDir, "engram.db")
	size := func() int64 {
		st, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	before := size()
	// About 2 MB of memories: more than SQLite's page cache spills and
	// more than a checkpoint interval's worth.
	for b := range 10 {
		var ms []*engram.Memory
		for i := range 100 {
			ms = append(ms, &engram.Memory{Content: fmt.Sprintf("batch %d memory %d: %0*d", b, i, 2000, i), Category: "work"})
		}
		if _, err := db.CreateMemories(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for size() < before+1<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes, %d before 2 MB of writes: the log was not checkpointed", size(), before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCheckpointTruncateBesideCheckpointer: a truncating checkpoint (what
// forgetting a user relies on) empties the write-ahead log whenever it
// runs, even at the moment the store's own checkpointer runs one: SQLite
// answers the second of two checkpoints busy, not with an error.
func TestCheckpointTruncateBesideCheckpointer(t *testing.T) {
	o := storetest.Options(t, "sqlite")
	db := storetest.OpenWith(t, o)
	ctx := storetest.Tenant(t, db, "ckpt")
	wal := filepath.Join(o.DataDir, "engram.db-wal")
	for i := range 40 {
		ms := make([]*engram.Memory, 200)
		for j := range ms {
			ms[j] = &engram.Memory{Content: fmt.Sprintf("round %d memory %d: %0*d", i, j, 500, j), Category: "work"}
		}
		if _, err := db.CreateMemories(ctx, ms); err != nil {
			t.Fatal(err)
		}
		// Land anywhere in the checkpointer's interval.
		time.Sleep(time.Duration(i*37%200) * time.Millisecond)
		if err := db.CheckpointTruncate(ctx); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(wal); err != nil || st.Size() != 0 {
			t.Fatalf("round %d: the write-ahead log holds %d bytes after a truncating checkpoint (%v)", i, st.Size(), err)
		}
	}
}
