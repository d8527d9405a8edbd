package store

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"
)

// Defaults of the recall writer (Options.RecallFlush, RecallBatch).
const (
	// DefaultRecallFlush is how long a recall record may wait in memory
	// before it is committed: what a crash can lose.
	DefaultRecallFlush = 20 * time.Millisecond
	// DefaultRecallBatch is how many recalls fill a batch, which is then
	// committed at once.
	DefaultRecallBatch = 128
	// DefaultRecallGrace is how long a recall id of another server (or a previous
	// process) may take to appear in the store: the flush interval of that
	// server plus its commit, with room for a database so loaded that
	// the commit queues for seconds (two servers on one SQLite file take
	// turns at its write lock through the busy timeout, unfairly).
	DefaultRecallGrace = 15 * time.Second
	// DefaultAccessFlush is how often the access counts are added to the
	// memory rows. Adding them rewrites every page holding an injected
	// memory, and on SQLite holds the one writer meanwhile; done at every
	// batch (each 20 ms under load) it cost about a third of the recalls'
	// own CPU, in bursts beside them. Once a second, a memory recalled
	// many times is written once, and so are the pages of neighbouring
	// memories.
	DefaultAccessFlush = time.Second
	// maxPendingAccess is how many memories' access counts may wait for
	// the next access flush; past it they are added at the next batch.
	maxPendingAccess = 50_000
)

// recallWriter takes the recall records and access counts off the
// recall's path. One per process (per DB): recalls join the open batch,
// and one goroutine commits a batch every flush interval, or as soon as
// it holds batch recalls. The recall rows commit first, in one
// transaction; then the access counts, in a second one that never waits
// for a row lock: it locks the memory rows in id order, skipping those
// another transaction holds (PostgreSQL), adds the counts to the rows it
// got and carries the rest to the next flush. So a recall never queues
// behind a feedback's or an edit's locks, and cannot deadlock with them.
// A feedback or interaction that names a recall still in the open batch
// takes its row out of the batch and writes it in its own transaction
// (claim); one that names a recall of a batch being committed waits for
// that commit (await), so it always finds its recall, and the batch's
// INSERT never waits for a feedback's transaction (on PostgreSQL a unique
// insert waits for an uncommitted row of the same id, and every feedback
// claiming from the next batch would queue behind it). Close commits what
// is left. A crash loses at most the open
// batch and the one being committed (recall records), and the access
// counts not yet added, never a memory, feedback or key write, which
// commit before they are acknowledged.
type recallWriter struct {
	db       *DB
	interval time.Duration
	size     int
	grace    time.Duration // how long to wait for another server's fresh recall
	every    time.Duration // how often access counts are added (AccessFlush)
	log      *slog.Logger

	mu     sync.Mutex
	open   *recallBatch
	byID   map[string]*recallBatch // open and committing batches, by recall id
	closed bool

	// claimed are the rows taken out of the open batch by claim, for the
	// claiming transaction to write; the run goroutine checks that they
	// arrived (checkClaims) and writes those that did not.
	claimed     map[string]*claimedRecall
	claimsCheck time.Time // when checkClaims last looked

	pending    map[accessKey]*accessCount // counts not yet added; the run goroutine's own
	accessedAt time.Time                  // when the counts were last added; the run goroutine's own

	kick  chan struct{}
	force chan chan struct{} // FlushRecalls: commit everything, then close the channel sent
	stop  chan struct{}
	done  chan struct{}
}

type recallBatch struct {
	rows   []recallRow
	access []accessRef
	done   chan struct{} // closed once the rows are committed (or failed: err)
	err    error
}

func newRecallWriter(db *DB, o Options) *recallWriter {
	interval, size, grace, every := o.RecallFlush, o.RecallBatch, o.RecallGrace, o.AccessFlush
	if interval <= 0 {
		interval = DefaultRecallFlush
	}
	if size <= 0 {
		size = DefaultRecallBatch
	}
	if grace <= 0 {
		grace = DefaultRecallGrace
	}
	if every <= 0 {
		every = DefaultAccessFlush
	}
	w := &recallWriter{db: db, interval: interval, size: size, grace: grace, every: every, log: o.Logger, byID: map[string]*recallBatch{},
		pending: map[accessKey]*accessCount{}, accessedAt: time.Now(), claimed: map[string]*claimedRecall{},
		kick: make(chan struct{}, 1), force: make(chan chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// add queues one recall. After close it commits the recall at once.
func (w *recallWriter) add(row recallRow, items []recallItemRef) error {
	refs := make([]accessRef, 0, len(items))
	for _, it := range items {
		if it.shown() {
			refs = append(refs, accessRef{tenant: row.TenantID, id: it.ID, at: row.CreatedAt})
		}
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		if err := w.commitRows([]recallRow{row}); err != nil {
			return err
		}
		counts := map[accessKey]*accessCount{}
		addAccess(counts, refs)
		return w.commitAccess(counts, true)
	}
	if w.open == nil {
		w.open = &recallBatch{done: make(chan struct{})}
	}
	b := w.open
	b.rows = append(b.rows, row)
	b.access = append(b.access, refs...)
	w.byID[row.ID] = b
	full := len(b.rows) >= w.size
	w.mu.Unlock()
	if full {
		w.signal()
	}
	return nil
}

func (w *recallWriter) signal() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *recallWriter) run() {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-w.kick:
		case reply := <-w.force:
			w.flush(true)
			close(reply)
			continue
		case <-w.stop:
			w.flush(true)
			if len(w.pending) > 0 {
				w.log.Warn("access counts given up", "memories", len(w.pending))
			}
			return
		}
		w.flush(false)
	}
}

// flush commits the open batch, if any, then the access counts when they
// are due (see DefaultAccessFlush); wait adds them now and waits for
// locked rows instead of carrying their counts.
func (w *recallWriter) flush(wait bool) {
	w.mu.Lock()
	b := w.open
	w.open = nil
	w.mu.Unlock()
	if b != nil {
		// gorm writes back into the rows it inserts, while claim may be
		// copying one of them under w.mu: insert copies.
		b.err = w.commitRows(slices.Clone(b.rows))
		if b.err != nil {
			w.log.Error("recall records lost", "recalls", len(b.rows), "err", b.err)
		}
		w.mu.Lock()
		for _, r := range b.rows {
			delete(w.byID, r.ID)
		}
		w.mu.Unlock()
		close(b.done)
		addAccess(w.pending, b.access)
	}
	w.checkClaims(wait)
	if len(w.pending) == 0 || !wait && time.Since(w.accessedAt) < w.every && len(w.pending) < maxPendingAccess {
		return
	}
	w.accessedAt = time.Now()
	if err := w.commitAccess(w.pending, wait); err != nil {
		w.log.Warn("access counts not saved yet", "memories", len(w.pending), "err", err)
	}
	stale := 0
	for k, c := range w.pending {
		if time.Since(c.since) > staleAccess {
			delete(w.pending, k)
			stale++
		}
	}
	if stale > 0 {
		w.log.Warn("access counts given up", "memories", stale)
	}
}

// conn is where the writer commits: SQLite's one writer connection; on
// PostgreSQL the read pool, whose connections are free within
// milliseconds, rather than the write pool, which writers waiting for row
// locks can hold for seconds under load. Neither of its transactions
// waits for a lock (see commitAccess), so it takes a read connection only
// briefly.
func (w *recallWriter) conn() *gorm.DB {
	if w.db.dialect.name() == "postgres" {
		return w.db.r
	}
	return w.db.w
}

// commitRows inserts recall rows in one transaction, retrying deadlocks
// and serialization failures.
func (w *recallWriter) commitRows(rows []recallRow) error {
	ctx := context.Background()
	return w.db.retry(ctx, func() error {
		// A feedback may have written one of them already (claim):
		// insertRecalls skips it.
		ptrs := make([]*recallRow, len(rows))
		for i := range rows {
			ptrs[i] = &rows[i]
		}
		return w.conn().WithContext(ctx).Transaction(func(tx *gorm.DB) error { return insertRecalls(tx, ptrs) })
	})
}

// flushAll commits every queued recall and access count, waiting for
// row locks, and returns once they are committed.
func (w *recallWriter) flushAll(ctx context.Context) error {
	reply := make(chan struct{})
	select {
	case w.force <- reply:
	case <-w.done:
		return nil // closed: everything was committed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close commits what is queued and stops the writer; later recalls
// commit one by one.
func (w *recallWriter) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
}

// FlushRecalls commits the recall records and access counts this
// process still holds, and waits for them.
func (db *DB) FlushRecalls(ctx context.Context) error {
	return db.recalls.flushAll(ctx)
}
