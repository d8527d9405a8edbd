//go:build unix

package store

import (
	"context"
	"database/sql/driver"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3"
)

// queuedDriver is go-sqlite3 whose connections, before each write
// transaction (and each statement run outside one), wait their turn on an
// exclusive flock of a file beside the database, <database>-writer.lock.
//
// Every engram store on a database file writes through one connection
// (see openSQLite), but several stores can share the file: two servers on
// one host, a CLI verb beside a server, bench load's servers. SQLite
// itself lets one of them write and answers the others busy; its busy
// handler then retries after sleeps of 1, 2, 5, 10, … up to 100 ms,
// whoever released the lock meanwhile, so under a steady load from two
// stores a write waited tens of milliseconds for a lock that had been
// free for most of them. A blocked flock wakes the next waiter when the
// holder unlocks, as the kernel queues them. The flock is only that
// queue: SQLite's own locks still decide who writes, and a connection
// that cannot take the flock (the file cannot be opened, or the wait
// passed the busy timeout) writes as before, under SQLite's busy handler.
// The kernel drops a process's flocks when it dies.
type queuedDriver struct {
	sqlite3.SQLiteDriver
}

// writerDriver is d with the flock queue (see queuedDriver).
func writerDriver(d sqlite3.SQLiteDriver) driver.Driver { return &queuedDriver{d} }

// writerLockSuffix names the lock file beside the database.
const writerLockSuffix = "-writer.lock"

// Open opens the connection and, beside it, its own descriptor of the
// lock file (flocks of two descriptors exclude each other, in one
// process too).
func (d *queuedDriver) Open(dsn string) (driver.Conn, error) {
	c, err := d.SQLiteDriver.Open(dsn)
	if err != nil {
		return nil, err
	}
	q := &queuedConn{SQLiteConn: c.(*sqlite3.SQLiteConn), wait: 5 * time.Second}
	path, params, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?")
	if v, err := url.ParseQuery(params); err == nil {
		if ms, err := strconv.Atoi(v.Get("_busy_timeout")); err == nil {
			q.wait = time.Duration(ms) * time.Millisecond
		}
	}
	if path != "" && path != ":memory:" {
		if f, err := os.OpenFile(path+writerLockSuffix, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
			q.lock = newFileQueue(f)
		}
	}
	return q, nil
}

// queuedConn is a writer connection that takes its turn in the file's
// queue before writing (see queuedDriver).
type queuedConn struct {
	*sqlite3.SQLiteConn
	lock *fileQueue // nil: no queue, SQLite's busy handler alone
	wait time.Duration
	inTx bool
}

// BeginTx waits for its turn, then begins; the turn lasts until the
// transaction ends.
func (c *queuedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.take()
	tx, err := c.SQLiteConn.BeginTx(ctx, opts)
	if err != nil {
		c.give()
		return nil, err
	}
	c.inTx = true
	return &queuedTx{Tx: tx, c: c}, nil
}

// ExecContext runs a statement outside a transaction in a turn of its
// own (SQLite runs it as a transaction).
func (c *queuedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.inTx {
		return c.SQLiteConn.ExecContext(ctx, query, args)
	}
	c.take()
	defer c.give()
	return c.SQLiteConn.ExecContext(ctx, query, args)
}

// QueryContext is ExecContext for statements that return rows
// (UPDATE … RETURNING): go-sqlite3 runs a statement to its first row
// before it returns, so the write is done within the turn.
func (c *queuedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.inTx {
		return c.SQLiteConn.QueryContext(ctx, query, args)
	}
	c.take()
	defer c.give()
	return c.SQLiteConn.QueryContext(ctx, query, args)
}

// Close closes the connection and the lock file (which drops the flock).
func (c *queuedConn) Close() error {
	err := c.SQLiteConn.Close()
	if c.lock != nil {
		c.lock.close()
	}
	return err
}

func (c *queuedConn) take() {
	if c.lock != nil {
		c.lock.take(c.wait)
	}
}

func (c *queuedConn) give() {
	if c.lock != nil {
		c.lock.give()
	}
}

// queuedTx ends its connection's turn with the transaction.
type queuedTx struct {
	driver.Tx
	c *queuedConn
}

func (t *queuedTx) Commit() error {
	defer t.end()
	return t.Tx.Commit()
}

func (t *queuedTx) Rollback() error {
	defer t.end()
	return t.Tx.Rollback()
}

func (t *queuedTx) end() {
	t.c.inTx = false
	t.c.give()
}

// fileQueue is one descriptor's place in a file's flock queue. The
// connection that owns it takes and gives turns one at a time.
type fileQueue struct {
	f    *os.File
	held bool // this descriptor holds the flock
	mu   sync.Mutex
	// waiting is a blocked flock a take gave up on, still in the queue;
	// the next take waits on it rather than queue the descriptor twice.
	waiting *flockWait
}

// flockWait is one blocked flock of the descriptor.
type flockWait struct {
	done      chan struct{} // closed once granted to a take still waiting
	abandoned bool          // no take waits for it: unlock once granted
	err       error
}

func newFileQueue(f *os.File) *fileQueue { return &fileQueue{f: f} }

// take waits for the exclusive flock, at most wait; past it the holder
// writes without it (SQLite's own lock still excludes the others) and the
// flock stays queued for the next take.
func (q *fileQueue) take(wait time.Duration) {
	fd := int(q.f.Fd())
	q.mu.Lock()
	w := q.waiting
	if w == nil {
		if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			q.mu.Unlock()
			q.held = true
			return
		}
		w = &flockWait{done: make(chan struct{})}
		q.waiting = w
		go q.block(fd, w)
	}
	w.abandoned = false
	q.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
		q.mu.Lock()
		select {
		case <-w.done: // granted meanwhile
		default:
			w.abandoned = true
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
	}
	q.held = w.err == nil
}

// block waits in the kernel's queue for the flock; granted to a take that
// gave up on it, it is given back at once.
func (q *fileQueue) block(fd int, w *flockWait) {
	err := flockRetry(fd)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = nil
	if w.abandoned {
		if err == nil {
			_ = syscall.Flock(fd, syscall.LOCK_UN)
		}
		return
	}
	w.err = err
	close(w.done)
}

// give releases the flock when this descriptor holds it.
func (q *fileQueue) give() {
	if q.held {
		q.held = false
		_ = syscall.Flock(int(q.f.Fd()), syscall.LOCK_UN)
	}
}

func (q *fileQueue) close() {
	_ = q.f.Close()
}

// flockRetry takes the exclusive flock, waiting, through interruptions.
func flockRetry(fd int) error {
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
