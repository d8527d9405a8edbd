package store

import (
	"database/sql"
	"log/slog"
	"sync"
	"time"

	"github.com/mattn/go-sqlite3"
)

// sqliteWriterDriver is go-sqlite3 with SQLite's automatic checkpoint
// turned off on each connection it opens: the writer's (see
// checkpointer).
const sqliteWriterDriver = "engram-sqlite-writer"

func init() {
	sql.Register(sqliteWriterDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec("PRAGMA wal_autocheckpoint=0", nil)
		return err
	}})
}

// checkpointInterval is how often the checkpointer copies the
// write-ahead log into the database file.
const checkpointInterval = 200 * time.Millisecond

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
type checkpointer struct {
	conn *sql.DB
	log  *slog.Logger
	stop chan struct{}
	done sync.WaitGroup
	once sync.Once
	err  error // of closing conn
}

func startCheckpointer(conn *sql.DB, log *slog.Logger) *checkpointer {
	conn.SetMaxOpenConns(1)
	c := &checkpointer{conn: conn, log: log, stop: make(chan struct{})}
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
			var busy, frames, copied int
			if err := c.conn.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
				c.log.Warn("checkpoint failed", "err", err)
			}
		}
	}
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
