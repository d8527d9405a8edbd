package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
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

type claimedRecall struct {
	row recallRow
	at  time.Time
}

// claimLimbo is how long a claimed recall row may be missing from the
// store before the writer writes it itself: longer than a feedback
// transaction takes with its retries, so it only comes into play when the
// claiming transaction failed for good.
const claimLimbo = 10 * time.Second

type recallBatch struct {
	rows   []recallRow
	access []accessRef
	done   chan struct{} // closed once the rows are committed (or failed: err)
	err    error
}

// accessRef is one memory a recall injected.
type accessRef struct {
	tenant, id string
	at         time.Time
}

type accessKey struct{ tenant, id string }

type accessCount struct {
	n     int
	last  time.Time // the newest recall that injected the memory
	since time.Time // when the first of these accesses was queued
}

// staleAccess is how long an access count may wait for its row (locked
// by others at every flush, or gone) before it is given up, with a
// warning.
const staleAccess = time.Minute

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
	refs := make([]accessRef, len(items))
	for i, it := range items {
		refs[i] = accessRef{tenant: row.TenantID, id: it.ID, at: row.CreatedAt}
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

func addAccess(counts map[accessKey]*accessCount, refs []accessRef) {
	now := time.Now()
	for _, a := range refs {
		k := accessKey{a.tenant, a.id}
		c := counts[k]
		if c == nil {
			c = &accessCount{since: now}
			counts[k] = c
		}
		c.n++
		if a.at.After(c.last) {
			c.last = a.at
		}
	}
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
		// A feedback may have written one of them already (claim).
		if err := w.conn().WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 100).Error; err != nil {
			return fmt.Errorf("store: save recalls: %w", err)
		}
		return nil
	})
}

// commitAccess adds the access counts to the memory rows in one
// transaction and removes the counts it added from counts. Unless wait,
// rows another transaction holds are skipped (their counts stay).
func (w *recallWriter) commitAccess(counts map[accessKey]*accessCount, wait bool) error {
	ids := make([]string, 0, len(counts))
	for k := range counts {
		ids = append(ids, k.id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	ctx := context.Background()
	lock := w.db.dialect.forUpdateSkipLocked
	if wait {
		lock = w.db.dialect.forUpdate
	}
	var done []accessKey
	err := w.db.retry(ctx, func() error {
		done = done[:0]
		return w.conn().WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			locked := make([]accessKey, 0, len(counts))
			if w.db.dialect.name() == "postgres" {
				for chunk := range slices.Chunk(ids, 500) {
					var rows []struct{ TenantID, ID string }
					if err := lock(tx.Model(&memoryRow{}).Select("tenant_id, id").Where("id IN ?", chunk).Order("id")).
						Find(&rows).Error; err != nil {
						return fmt.Errorf("store: lock accessed memories: %w", err)
					}
					for _, r := range rows {
						locked = append(locked, accessKey{r.TenantID, r.ID})
					}
				}
			} else {
				// SQLite's one writer holds every row: there is nothing to
				// lock or pass over, and a memory gone since is no row to
				// update.
				for k := range counts {
					locked = append(locked, k)
				}
			}
			// One statement per tenant and count, whatever the times:
			// grouped by time too, a second of counts would take a
			// statement per recall. The group's newest time stands for
			// all of its memories.
			type group struct {
				tenant string
				n      int
			}
			type members struct {
				ids  []string
				last time.Time
			}
			groups := map[group]*members{}
			for _, k := range locked {
				if c := counts[k]; c != nil {
					g := groups[group{k.tenant, c.n}]
					if g == nil {
						g = &members{}
						groups[group{k.tenant, c.n}] = g
					}
					g.ids = append(g.ids, k.id)
					if c.last.After(g.last) {
						g.last = c.last
					}
					done = append(done, k)
				}
			}
			for g, m := range groups {
				for chunk := range slices.Chunk(m.ids, 500) {
					if err := tx.Exec(`UPDATE memories SET access_count = access_count + ?, last_accessed_at = ? WHERE id IN ? AND `+
						w.db.dialect.unindexed("tenant_id")+` = ?`, g.n, m.last.UTC(), chunk, g.tenant).Error; err != nil {
						return fmt.Errorf("store: count access: %w", err)
					}
				}
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, k := range done {
		delete(counts, k)
	}
	return nil
}

// claim returns the row of a recall of tenant still in the open batch,
// for a transaction that needs the recall to write it itself
// (insertRecall) rather than wait for the batch: the row leaves the batch,
// which so never waits for that transaction. A recall claimed before is
// returned again; one in a batch being committed is not claimed (await
// waits for it).
func (w *recallWriter) claim(tenant, id string) *recallRow {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c := w.claimed[id]; c != nil {
		if c.row.TenantID != tenant {
			return nil
		}
		row := c.row
		return &row
	}
	b := w.byID[id]
	if b == nil || b != w.open {
		return nil
	}
	for i := range b.rows {
		if b.rows[i].ID == id && b.rows[i].TenantID == tenant {
			row := b.rows[i]
			b.rows = slices.Delete(b.rows, i, i+1)
			delete(w.byID, id)
			w.claimed[id] = &claimedRecall{row: row, at: time.Now()}
			return &row
		}
	}
	return nil
}

// checkClaims forgets the claimed rows that are in the store and writes
// those missing for longer than claimLimbo (all of them when final), so a
// claiming transaction that failed for good loses no recall record. It
// looks at most once a second unless final.
func (w *recallWriter) checkClaims(final bool) {
	now := time.Now()
	if !final && now.Sub(w.claimsCheck) < time.Second {
		return
	}
	w.claimsCheck = now
	w.mu.Lock()
	ids := make([]string, 0, len(w.claimed))
	for id, c := range w.claimed {
		if final || now.Sub(c.at) > time.Second {
			ids = append(ids, id)
		}
	}
	w.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	var found []string
	for chunk := range slices.Chunk(ids, 500) {
		var got []string
		if err := w.conn().Model(&recallRow{}).Where("id IN ?", chunk).Pluck("id", &got).Error; err != nil {
			w.log.Warn("claimed recalls not checked", "err", err)
			return
		}
		found = append(found, got...)
	}
	w.mu.Lock()
	for _, id := range found {
		delete(w.claimed, id)
	}
	var missing []recallRow
	for id, c := range w.claimed {
		if final || now.Sub(c.at) > claimLimbo {
			missing = append(missing, c.row)
			delete(w.claimed, id)
		}
	}
	w.mu.Unlock()
	if len(missing) == 0 {
		return
	}
	if err := w.commitRows(missing); err != nil {
		w.log.Error("recall records lost", "recalls", len(missing), "err", err)
	}
}

// insertRecall writes a claimed recall row inside tx, unless it is
// there already.
func insertRecall(tx *gorm.DB, row *recallRow) error {
	if row == nil {
		return nil
	}
	if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(row).Error; err != nil {
		return fmt.Errorf("store: save recall: %w", err)
	}
	return nil
}

// readyRecall prepares a write that names a recall: a recall of this
// process still queued is claimed (returned twice: for the write's
// transaction to insert with insertRecall, and as the recall it names);
// any other is waited for (awaitRecall) and returned as found, or nil. A
// recall row never changes once written, so the write need not read it
// again in its transaction; nil leaves the lookup (and its ENOTFOUND) to
// the transaction.
func (db *DB) readyRecall(ctx context.Context, tenant, id string) (claimed, found *recallRow, err error) {
	if id == "" {
		return nil, nil, nil
	}
	if row := db.recalls.claim(tenant, id); row != nil {
		return row, row, nil
	}
	found, err = db.awaitRecall(ctx, tenant, id)
	return nil, found, err
}

// await returns once the recall id is committed, if this process holds
// it in a batch: that batch is committed at once.
func (w *recallWriter) await(ctx context.Context, id string) error {
	w.mu.Lock()
	b := w.byID[id]
	w.mu.Unlock()
	if b == nil {
		return nil
	}
	w.signal()
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
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

// awaitRecall makes sure the recall id, if it exists, is in the store
// before a transaction reads it, and returns it (nil when it is not found
// or cannot carry a time): a recall of this process still in a batch is
// committed at once; a recall id of another server that is not in the
// store yet but was made less than the grace (Options.RecallGrace) ago is
// waited for (its server commits it within its flush interval). Runs
// outside any transaction: on SQLite the writer must stay free for the
// batch. An id that never appears is left for the caller's lookup to
// report.
func (db *DB) awaitRecall(ctx context.Context, tenant, id string) (*recallRow, error) {
	if err := db.recalls.await(ctx, id); err != nil {
		return nil, err
	}
	made, ok := recallTime(id)
	if !ok {
		return nil, nil
	}
	// The id's clock is the wall clock of the server that made it; a
	// clock far ahead is still waited for at most the grace from now.
	grace := db.recalls.grace
	deadline := min(made.Add(grace).UnixNano(), time.Now().Add(grace).UnixNano())
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		var rows []recallRow
		if err := db.r.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Limit(1).Find(&rows).Error; err != nil {
			return nil, fmt.Errorf("store: find recall: %w", err)
		}
		if len(rows) == 1 {
			return &rows[0], nil
		}
		if time.Now().UnixNano() >= deadline {
			return nil, nil
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// newRecallID returns rec_ plus the wall-clock time in milliseconds (48
// bits) and 80 random bits: a server that does not find a recall yet can
// tell a fresh id (still in another server's batch) from an unknown one.
func newRecallID() string {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "rec_" + idEncoding.EncodeToString(b)
}

// recallTime reads the time out of an id made by newRecallID.
func recallTime(id string) (time.Time, bool) {
	s, ok := strings.CutPrefix(id, "rec_")
	if !ok || len(s) != 26 {
		return time.Time{}, false
	}
	b, err := idEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b) >> 16)), true
}

// maxAttempts bounds the retries of a write transaction that lost a
// deadlock or a serialization failure (PostgreSQL).
const maxAttempts = 10

// retry runs fn again after a deadlock or serialization failure
// (PostgreSQL), up to maxAttempts times with a short random back-off: fn
// must be a whole transaction (or one statement), rolled back on failure.
func (db *DB) retry(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !db.dialect.isTransient(err) || attempt >= maxAttempts {
			return err
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// backoff sleeps a random time that grows with the attempt (2–4 ms, 4–8
// ms, … up to 256–512 ms: about 2 s over maxAttempts), so transactions
// that collided do not collide again in step, and a writer behind a
// long queue of lock holders outlasts it.
func backoff(ctx context.Context, attempt int) error {
	var b [1]byte
	_, _ = rand.Read(b[:])
	d := 2 * time.Millisecond << min(attempt, 7)
	d += time.Duration(int(b[0])) * d / 256
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
