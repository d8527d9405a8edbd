package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"
)

// sqliteWriterDriver is go-sqlite3 with SQLite's automatic checkpoint
// turned off on each connection it opens, the writer's (see
// checkpointer), and a log that grew past walSizeLimit bytes (behind a
// long reader) cut back to it when it starts over.
const sqliteWriterDriver = "engram-sqlite-writer"

// walSizeLimit is SQLite's journal_size_limit on the writer: four times
// the log at which the checkpointer restarts it.
const walSizeLimit = 4 * walRestartFrames * 4096

func init() {
	sql.Register(sqliteWriterDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec(fmt.Sprintf("PRAGMA wal_autocheckpoint=0; PRAGMA journal_size_limit=%d", walSizeLimit), nil)
		return err
	}})
}

// checkpointInterval is how often the checkpointer copies the
// write-ahead log into the database file.
const checkpointInterval = 200 * time.Millisecond

// walRestartFrames is how many frames (pages) the write-ahead log holds
// before the checkpointer makes it start over from its beginning: 64 MiB
// at 4 KiB pages. Each restart holds the writes back for its copy and
// two fsyncs; at 4,096 frames batched ingest lost 7% of its memories/s
// (BenchmarkIngest), at 16,384 nothing, and feedback alone gained as much
// with either (engram bench load --feedback-only).
const walRestartFrames = 16384

// restartWait bounds how long a RESTART checkpoint waits for readers,
// with every write of the process waiting behind it; a reader that
// holds out longer (an export) only postpones the restart to a later tick.
const restartWait = 100 * time.Millisecond

// checkpointer copies SQLite's write-ahead log into the database file
// from a connection of its own. SQLite's automatic checkpoint runs in the
// commit that takes the log past 1,000 pages, on the committing
// connection: the one writer, which every write of the process queues
// for, copied those pages itself, a tenth to a fifth of its time under
// feedback load. The writer's connections turn it off
// (sqliteWriterDriver) and this goroutine runs a PASSIVE checkpoint
// every checkpointInterval, which waits for neither the writer nor the
// readers; on a machine of several cores the copy runs beside the
// writer. A checkpoint that fails is logged and tried again at the next
// tick; the log only grows meanwhile, as it would behind a long reader.
//
// A passive checkpoint never lets the log start over while writes go on:
// the writer appends frames while each one runs, so none copies the whole
// log, and the file grew by every page written (3 GB in twenty seconds
// of feedback), each frame a newly allocated block of the file system.
// Once the log holds walRestartFrames frames, the checkpointer takes the
// writer's connection, so that no write of the process starts, and runs
// a RESTART checkpoint, which copies the rest and waits (restartWait at
// most) for the readers to leave the log: the next write then starts it
// over from its beginning, over blocks already allocated and cached.
type checkpointer struct {
	conn     *sql.DB
	writer   *sql.DB // the store's writer pool, of one connection
	log      *slog.Logger
	restarts atomic.Int64 // RESTART checkpoints tried
	// mu is held through each of its checkpoints and by
	// DB.checkpointTruncate's: of two checkpoints at once SQLite runs
	// one and answers the other busy, in its result row, not as an error.
	mu   sync.Mutex
	stop chan struct{}
	done sync.WaitGroup
	once sync.Once
	err  error // of closing conn
}

func startCheckpointer(conn, writer *sql.DB, log *slog.Logger) *checkpointer {
	conn.SetMaxOpenConns(1)
	c := &checkpointer{conn: conn, writer: writer, log: log, stop: make(chan struct{})}
	c.done.Add(1)
	go c.run()
	return c
}

func (c *checkpointer) run() {
	defer c.done.Done()
	t := time.NewTicker(checkpointInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.mu.Lock()
			var busy, frames, copied int
			err := c.conn.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
			if err == nil && frames >= walRestartFrames && frames-copied <= walRestartFrames/2 {
				err = c.restart()
			}
			c.mu.Unlock()
			if err != nil {
				c.log.Warn("checkpoint failed", "err", err)
			}
		}
	}
}

// restart runs a RESTART checkpoint while it holds the writer's
// connection (see checkpointer). A restart that readers held off, or
// that found the writer busy for a whole checkpointInterval (a long
// write transaction, an import), is tried again at a later tick, so that
// neither the checkpointer nor the store's Close waits for such a write.
// run does not try one while the passive checkpoint before it left more
// than half of walRestartFrames uncopied: a reader holds an old snapshot
// (an export), which a restart would wait for in vain, holding every
// write back for restartWait a tick.
func (c *checkpointer) restart() error {
	c.restarts.Add(1)
	wait, cancel := context.WithTimeout(context.Background(), checkpointInterval)
	w, err := c.writer.Conn(wait)
	cancel()
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil
	case err != nil:
		return err
	}
	defer w.Close()
	var busy, frames, copied int
	return c.conn.QueryRow("PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &frames, &copied)
}

// close stops the checkpointer and closes its connection, once; SQLite
// checkpoints what is left when the store's last connection closes.
func (c *checkpointer) close() error {
	c.once.Do(func() {
		close(c.stop)
		c.done.Wait()
		c.err = c.conn.Close()
	})
	return c.err
}

// checkpointTruncate copies the whole write-ahead log into the database
// file and truncates the log (SQLite), after any checkpoint of the
// checkpointer, and fails when readers kept it from completing after a
// few tries (SQLite answers that busy in the result row, not as an
// error): forgetting a user relies on it to leave no old page in the log.
func (db *DB) checkpointTruncate(ctx context.Context) error {
	if db.checkpoints != nil {
		db.checkpoints.mu.Lock()
		defer db.checkpoints.mu.Unlock()
	}
	for try := 0; ; try++ {
		var busy, frames, copied int
		if err := db.w.WithContext(ctx).Raw(`PRAGMA wal_checkpoint(TRUNCATE)`).Row().Scan(&busy, &frames, &copied); err != nil {
			return fmt.Errorf("store: checkpoint: %w", err)
		}
		if busy == 0 {
			return nil
		}
		if try == 4 {
			return errors.New("store: checkpoint: the write-ahead log stayed in use by readers")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
