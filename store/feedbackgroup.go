package store

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// maxGroup bounds the feedbacks of one group transaction. Written again
// after a failure (see commitGroup), each runs in a savepoint, which on
// PostgreSQL is a subtransaction; past 64 of them a
// transaction's subtransaction ids overflow the shared cache and slow
// every snapshot on the server.
const maxGroup = 32

// feedbackGroups commits the concurrent feedbacks of one process in
// groups, per tenant: a feedback that arrives while its tenant's group is
// being written waits, and the next group takes every feedback that
// waited (up to maxGroup) into one write transaction. A lone feedback is
// written at once, as before, so grouping adds no wait.
//
// A member is a feedback's workflow (see RunFeedback); the store runs it
// with a feedbackTx over the group's transaction and decides nothing of
// it. In a group each feedback runs in arrival order (in its own
// savepoint once a member failed, see commitGroup), and sees its predecessors' writes as if they had committed before it:
// its idempotency key, the rater's cap and the judged memories are read
// in the shared transaction, and the rows every feedback adds to (the
// helpfulness rows, the tenant-wide totals among them, and the raters'
// reputations) are summed in memory (groupLearning), read through that
// sum, and written once at the group's end, in key order, followed by
// the group's events under the tenant's feed lock. A feedback that fails
// fails alone: a client error (ENOTFOUND, …)
// is its answer, while a lost race (the same idempotency key committed by
// another server, a deadlock victim, a version that moved) is run again
// in the next group, at most maxAttempts times. Every answer waits for
// the group's commit. When the commit or the group's tail fails with a
// deadlock or serialization failure (PostgreSQL), the whole group is run
// again from its start, with the growing back-off of retry; any other
// failure of the group is every member's answer.
//
// The group first writes the recalls its members claimed and reads what
// they would each read at their start (prefetchGroup); on PostgreSQL it
// locks, in id order, every memory the recalls it credits injected, so
// that groups of several servers take those row locks in one order, as
// single feedbacks do.
type feedbackGroups struct {
	db      *DB
	mu      sync.Mutex
	waiting map[string][]*feedbackMember // by tenant
	running map[string]bool              // a group of the tenant is being written
}

// feedbackMember is one feedback waiting for, or in, a group.
type feedbackMember struct {
	ctx      context.Context
	recallID string              // the recall the feedback names, if any
	fn       engram.FeedbackFunc // the feedback's workflow
	claimed  *recallRow          // a recall claimed from the recall writer, to insert
	recall   *recallRow          // the recall recallID names, when known
	rater    string              // the rater the workflow names, if known (see groupReads)
	pending  string              // the pending feedback it applies (its id), if any
	attempt  int

	res  *engram.FeedbackResult
	err  error
	done chan struct{} // closed once res or err is final
}

func newFeedbackGroups(db *DB) *feedbackGroups {
	return &feedbackGroups{db: db, waiting: map[string][]*feedbackMember{}, running: map[string]bool{}}
}

// submit queues m and returns once its answer is final. The caller whose
// feedback finds no group running writes the groups itself until its own
// is committed, then hands what waits to a goroutine.
func (f *feedbackGroups) submit(tenant string, m *feedbackMember) {
	f.mu.Lock()
	f.waiting[tenant] = append(f.waiting[tenant], m)
	lead := !f.running[tenant]
	f.running[tenant] = true
	f.mu.Unlock()
	if lead {
		f.lead(tenant, m)
	}
	<-m.done
}

// lead writes the tenant's groups until own's answer is final (own nil:
// until none waits).
func (f *feedbackGroups) lead(tenant string, own *feedbackMember) {
	for {
		f.mu.Lock()
		q := f.waiting[tenant]
		n := min(len(q), maxGroup)
		if n == 0 {
			delete(f.waiting, tenant)
			delete(f.running, tenant)
			f.mu.Unlock()
			return
		}
		batch := append([]*feedbackMember(nil), q[:n]...)
		f.waiting[tenant] = q[n:]
		f.mu.Unlock()
		retry := f.commit(tenant, batch)
		f.mu.Lock()
		if len(retry) > 0 {
			f.waiting[tenant] = append(retry, f.waiting[tenant]...)
		}
		if own != nil && isClosed(own.done) {
			more := len(f.waiting[tenant]) > 0
			if !more {
				delete(f.waiting, tenant)
				delete(f.running, tenant)
			}
			f.mu.Unlock()
			if more {
				go f.lead(tenant, nil)
			}
			return
		}
		f.mu.Unlock()
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// commit writes one group, running it again while it fails with a
// deadlock or a serialization failure, and answers its members; it
// returns those to run again in the next group.
func (f *feedbackGroups) commit(tenant string, batch []*feedbackMember) []*feedbackMember {
	db := f.db
	var err error
	for attempt := 0; ; attempt++ {
		err = db.commitGroupSafely(tenant, batch)
		if err == nil || !db.dialect.isTransient(err) || attempt >= maxAttempts {
			break
		}
		if backoff(context.Background(), attempt) != nil {
			break
		}
	}
	var retry []*feedbackMember
	for _, m := range batch {
		if err != nil {
			// The group failed: no member's write stands.
			m.res, m.err = nil, err
		}
		if m.err != nil && db.lostRace(m.err) && m.attempt < maxAttempts && m.ctx.Err() == nil {
			m.attempt++
			m.res, m.err = nil, nil
			retry = append(retry, m)
			continue
		}
		close(m.done)
	}
	return retry
}

// commitGroupSafely is commitGroup, with a panic in it (a bug; the
// transaction is rolled back) made the group's error: the members waiting
// for the group, and those queued behind it, must still be answered.
func (db *DB) commitGroupSafely(tenant string, batch []*feedbackMember) (err error) {
	defer func() {
		if p := recover(); p != nil {
			db.log.Error("feedback group failed", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("store: feedback group: panic: %v", p)
		}
	}()
	return db.commitGroup(tenant, batch)
}

// lostRace tells a write that lost a race, to run again on fresh data:
// a concurrent write of the same memory or idempotency key, or a deadlock
// victim.
func (db *DB) lostRace(err error) bool {
	return errors.Is(err, errRetry) || db.dialect.isUniqueViolation(err) || db.dialect.isTransient(err)
}

// errMemberFailed ends a group written without savepoints (see
// commitGroup) when one of its feedbacks failed: nothing of it stands.
var errMemberFailed = errors.New("store: a feedback of the group failed")

// commitGroup writes batch in one transaction, leaving each member's
// result or error in it. The error returned is the group's: nothing of it
// was committed. A group of several is first written without savepoints,
// as one feedback is (on PostgreSQL each savepoint and its release is a
// round trip and a subtransaction); should any of its feedbacks fail, that
// transaction is rolled back and the group written again with each
// feedback in its own savepoint (see feedbackGroups), where a failure
// is its feedback's alone.
func (db *DB) commitGroup(tenant string, batch []*feedbackMember) error {
	if len(batch) > 1 {
		err := db.writeGroup(tenant, batch, false)
		if !errors.Is(err, errMemberFailed) {
			return err
		}
	}
	return db.writeGroup(tenant, batch, true)
}

// writeGroup is one run of commitGroup: with savepoints, each member of
// a group of several in its own; without, any member's failure is
// errMemberFailed (a lone member's is its own error).
func (db *DB) writeGroup(tenant string, batch []*feedbackMember, savepoints bool) error {
	for _, m := range batch {
		m.res, m.err = nil, nil
	}
	alone := len(batch) == 1
	savepoints = savepoints && !alone
	ctx := context.Background()
	return db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := db.claimPending(tx, batch); err != nil {
			return err
		}
		g, help, writes, reads := newGroupLearning(), newHelpReads(), newGroupWrites(), newGroupReads(batch, db.dialect.name() == "postgres")
		if err := db.prefetchGroup(tx, tenant, batch, writes, help); err != nil {
			return err
		}
		var events []eventRow
		for _, m := range batch {
			if m.err != nil { // a pending feedback another transaction holds
				continue
			}
			if err := m.ctx.Err(); err != nil {
				m.err = err
				continue
			}
			p := &pendingEvents{}
			mctx := context.WithValue(context.WithoutCancel(m.ctx), pendingKey{}, p)
			if savepoints {
				if err := tx.Exec("SAVEPOINT feedback").Error; err != nil {
					return err
				}
			}
			res, t, err := db.applyFeedback(mctx, tx, tenant, m, g, help, writes, reads)
			if err == nil {
				// A request given up while its feedback was written gets
				// nothing written. Its statements ran without its context:
				// an interrupted statement would end the group's
				// transaction (SQLite) or connection (PostgreSQL).
				err = m.ctx.Err()
			}
			if err != nil {
				if alone {
					return err
				}
				if !savepoints {
					return errMemberFailed
				}
				if rerr := tx.Exec("ROLLBACK TO SAVEPOINT feedback").Error; rerr != nil {
					return rerr
				}
				m.err = err
			} else {
				m.res = res
				events = append(events, p.rows...)
				g.merge(t.own)
				writes.merge(t.writes)
			}
			if savepoints {
				if err := tx.Exec("RELEASE SAVEPOINT feedback").Error; err != nil {
					return err
				}
			}
		}
		if err := writes.flush(db, tx); err != nil {
			return err
		}
		if err := g.write(db, tx, tenant); err != nil {
			return err
		}
		if len(events) == 0 {
			return nil
		}
		return db.appendEvents(ctx, tx, tenant, events)
	})
}

// applyFeedback runs one member's workflow in its group's transaction,
// after the recall it claimed, if any: g is what the group's earlier
// feedbacks added to helpfulness and reputation, help the helpfulness
// rows the group has read, writes what the group's credits wrote, reads
// the reputations and credits read once for the group; what
// this one adds (t.own, t.writes) is returned, for the group to take once
// it succeeded.
func (db *DB) applyFeedback(ctx context.Context, tx *gorm.DB, tenant string, m *feedbackMember, g *groupLearning, help *helpReads,
	writes *groupWrites, reads *groupReads) (*engram.FeedbackResult, *feedbackTx, error) {
	t := db.newFeedbackTx(tx, tenant, m, g, help, writes)
	t.reads = reads
	res, err := m.fn(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	if m.pending != "" {
		t.writes.applied = append(t.writes.applied, m.pending)
	}
	return res, t, nil
}

// prefetchGroup does at once, for all the members of a group, what each
// would do for itself at its start: it writes the recalls they claimed
// (kept even when a member fails: a recall was served whatever is said
// of it), reads the memories their recalls injected into the group's
// view (writes; locked on PostgreSQL, in id order, so that groups of
// several servers take those row locks in one order, as single feedbacks
// do; SQLite has one writer) and reads those memories' helpfulness rows
// into help. A member's LockMemories and FindHelpEvidence then read
// nothing: on PostgreSQL each of those reads was a round trip per member
// while the group held its locks.
func (db *DB) prefetchGroup(tx *gorm.DB, tenant string, batch []*feedbackMember, writes *groupWrites, help *helpReads) error {
	var claimed []*recallRow
	for _, m := range batch {
		if m.err == nil && m.claimed != nil {
			claimed = append(claimed, m.claimed)
		}
	}
	if err := insertRecalls(tx, claimed); err != nil {
		return err
	}
	ids := groupMemoryIDs(batch)
	if len(ids) == 0 {
		return nil
	}
	mems, err := db.lockCredited(tx, tenant, ids, writes)
	if err != nil {
		return err
	}
	return help.prefetch(tx, tenant, mems)
}

// lockCredited reads the memories ids (sorted) as a credit reads them,
// locked on PostgreSQL in id order, by id alone (rows of other tenants
// are dropped after the read), into w, and returns them.
func (db *DB) lockCredited(tx *gorm.DB, tenant string, ids []string, w *groupWrites) ([]*engram.Memory, error) {
	rows, err := findCredited(db.dialect.forUpdate(tx).Where(inList(tx, "id", ids)).Order("id"))
	if err != nil {
		return nil, fmt.Errorf("store: memories to credit: %w", err)
	}
	mems := make([]*engram.Memory, 0, len(rows))
	for i := range rows {
		if rows[i].TenantID != tenant {
			continue
		}
		m := rows[i].toMemory()
		w.mems[m.ID] = &pendingMemory{seq: rows[i].Seq, m: m}
		mems = append(mems, m)
	}
	return mems, nil
}
