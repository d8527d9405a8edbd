package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// pendingPoll is how often the applier looks for pending feedback it was
// not told of: rows another server queued, or a restart left.
const pendingPoll = time.Second

// errUnclaimed is a pending feedback another transaction holds or has
// applied: it is left to that one.
var errUnclaimed = errors.New("store: pending feedback claimed elsewhere")

// pendingRow is a feedback acknowledged before it was applied (migration
// 0024): its id is the id of the feedback row that applying it writes.
type pendingRow struct {
	Seq            int64 `gorm:"primaryKey;autoIncrement"`
	ID             string
	TenantID       string
	RecallID       string
	IdempotencyKey string
	Input          string // the engram.FeedbackInput, as validated
	Credits        string // the JSON list of ids it will credit
	CreatedAt      time.Time
}

func (pendingRow) TableName() string { return "feedback_pending" }

func (r *pendingRow) status() (*engram.FeedbackStatus, error) {
	out := &engram.FeedbackStatus{FeedbackID: r.ID, Status: engram.FeedbackPending, Credits: []string{}}
	if err := json.Unmarshal([]byte(r.Credits), &out.Credits); err != nil {
		return nil, fmt.Errorf("store: pending feedback credits: %w", err)
	}
	return out, nil
}

// appliedStatus is the status of a feedback whose result is res.
func appliedStatus(res *engram.FeedbackResult) *engram.FeedbackStatus {
	out := &engram.FeedbackStatus{FeedbackID: res.FeedbackID, Status: engram.FeedbackApplied, Credits: []string{}, Result: res}
	for _, c := range res.Credited {
		out.Credits = append(out.Credits, c.ID)
	}
	for _, c := range res.Reflections {
		out.Credits = append(out.Credits, c.ID)
	}
	return out
}

// FindFeedbackStatus implements learning.FeedbackStore. The pending row
// is read before the feedback row: applying deletes the one and writes
// the other in one transaction, so a feedback is always found.
func (db *DB) FindFeedbackStatus(ctx context.Context, id string) (*engram.FeedbackStatus, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	var pending []pendingRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Limit(1).Find(&pending).Error; err != nil {
		return nil, fmt.Errorf("store: find feedback: %w", err)
	}
	if len(pending) > 0 {
		return pending[0].status()
	}
	var fb []feedbackRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ? AND id = ?", tenant, id).Limit(1).Find(&fb).Error; err != nil {
		return nil, fmt.Errorf("store: find feedback: %w", err)
	}
	if len(fb) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "feedback %q not found", id)
	}
	var res engram.FeedbackResult
	if err := json.Unmarshal([]byte(fb[0].Result), &res); err != nil {
		return nil, fmt.Errorf("store: stored feedback result: %w", err)
	}
	return appliedStatus(&res), nil
}

// feedbackApplier applies pending feedback, per process: woken by each
// feedback this process queues, and every pendingPoll for the others.
type feedbackApplier struct {
	mu      sync.Mutex
	started bool // the loop runs (or ran)
	closed  bool // Close stopped it, or it never starts
	build   func(engram.FeedbackInput) engram.FeedbackFunc
	applied func(context.Context, *engram.FeedbackResult) error
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

func newFeedbackApplier() *feedbackApplier {
	return &feedbackApplier{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

func (a *feedbackApplier) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// close stops the applier, if it runs, once its round is over; a
// closed applier never starts.
func (a *feedbackApplier) close() {
	a.mu.Lock()
	stop := a.started && !a.closed
	a.closed = true
	a.mu.Unlock()
	if stop {
		close(a.stop)
		<-a.done
	}
}

// StartFeedbackApplier implements learning.FeedbackStore: the first call
// starts the applier, which runs until Close; later calls do nothing.
// applied runs after each feedback's commit (what the synchronous path
// does after RunFeedback); its error is logged.
func (db *DB) StartFeedbackApplier(build func(engram.FeedbackInput) engram.FeedbackFunc, applied func(context.Context, *engram.FeedbackResult) error) {
	a := db.applier
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.started || a.closed {
		return
	}
	a.started, a.build, a.applied = true, build, applied
	go db.runApplier()
}

func (db *DB) runApplier() {
	a := db.applier
	defer close(a.done)
	tick := time.NewTicker(pendingPoll)
	defer tick.Stop()
	for {
		n, err := db.applyPendingSafely()
		if err != nil {
			db.log.Warn("applying pending feedback failed", "err", err)
		}
		if n > 0 && err == nil {
			select {
			case <-a.stop:
				return
			default:
				continue
			}
		}
		select {
		case <-a.stop:
			return
		case <-a.wake:
		case <-tick.C:
		}
	}
}

// applyPendingSafely is applyPending with a panic (a bug) logged as its
// error: the applier goes on.
func (db *DB) applyPendingSafely() (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			db.log.Error("pending feedback failed", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("store: pending feedback: panic: %v", p)
		}
	}()
	return db.applyPending()
}

// applyPending applies the oldest pending feedback of each tenant that
// has some, a group of up to maxGroup per tenant, through the group
// machinery of RunFeedback (commitGroup claims the rows and deletes each
// in its feedback's savepoint), and returns how many it applied. A
// feedback that fails for good (its target gone since it was queued) is
// logged and dropped; one that lost a race stays pending for the next
// round.
func (db *DB) applyPending() (int, error) {
	var tenants []string
	if err := db.r.Model(&pendingRow{}).Distinct("tenant_id").Limit(100).Pluck("tenant_id", &tenants).Error; err != nil {
		return 0, err
	}
	applied := 0
	for _, tenant := range tenants {
		var rows []pendingRow
		if err := db.r.Where("tenant_id = ?", tenant).Order("seq").Limit(maxGroup).Find(&rows).Error; err != nil {
			return applied, err
		}
		recalls, err := db.findRecalls(tenant, rows)
		if err != nil {
			return applied, err
		}
		batch := make([]*feedbackMember, 0, len(rows))
		for _, r := range rows {
			var in engram.FeedbackInput
			if err := json.Unmarshal([]byte(r.Input), &in); err != nil {
				return applied, fmt.Errorf("store: pending feedback %s: %w", r.ID, err)
			}
			ctx := engram.NewContextWithUser(engram.NewContextWithTenant(context.Background(), tenant), in.UserID)
			m := &feedbackMember{ctx: ctx, recallID: r.RecallID, rater: in.Rater, fn: db.applier.build(in), pending: r.ID, done: make(chan struct{})}
			m.recall = recalls[r.RecallID] // nil: the transaction reads it
			batch = append(batch, m)
		}
		db.feedbacks.commit(tenant, batch)
		for _, m := range batch {
			switch {
			case m.res != nil:
				applied++
				if err := db.applier.applied(m.ctx, m.res); err != nil {
					db.log.Warn("after applying pending feedback", "feedback_id", m.pending, "err", err)
				}
			case m.err != nil && m.err != errUnclaimed && !db.lostRace(m.err):
				db.log.Error("pending feedback dropped", "feedback_id", m.pending, "err", m.err)
				if err := db.w.Where("tenant_id = ? AND id = ?", tenant, m.pending).Delete(&pendingRow{}).Error; err != nil {
					return applied, err
				}
			}
		}
	}
	return applied, nil
}

// findRecalls reads, in one statement, the recalls the pending rows
// name, by id; a recall named by several rows is read once.
func (db *DB) findRecalls(tenant string, rows []pendingRow) (map[string]*recallRow, error) {
	var ids []string
	for _, r := range rows {
		if r.RecallID != "" && !slices.Contains(ids, r.RecallID) {
			ids = append(ids, r.RecallID)
		}
	}
	out := make(map[string]*recallRow, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var recs []recallRow
	in, list := inList(db.r, "id", ids)
	if err := db.r.Where("tenant_id = ? AND "+in, tenant, list).Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("store: find recalls: %w", err)
	}
	for i := range recs {
		out[recs[i].ID] = &recs[i]
	}
	return out, nil
}

// claimPending locks the pending rows of a group of pending feedback
// (PostgreSQL: FOR UPDATE SKIP LOCKED, so that servers applying at once
// take disjoint rows; SQLite has one writer) and marks the members
// whose row is gone or held elsewhere errUnclaimed.
func (db *DB) claimPending(tx *gorm.DB, batch []*feedbackMember) error {
	ids := make([]string, 0, len(batch))
	for _, m := range batch {
		if m.pending != "" {
			ids = append(ids, m.pending)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	var held []string
	if err := db.dialect.forUpdateSkipLocked(tx.Model(&pendingRow{})).Where(inList(tx, "id", ids)).Pluck("id", &held).Error; err != nil {
		return fmt.Errorf("store: claim pending feedback: %w", err)
	}
	ok := map[string]bool{}
	for _, id := range held {
		ok[id] = true
	}
	for _, m := range batch {
		if m.pending != "" && !ok[m.pending] {
			m.err = errUnclaimed
		}
	}
	return nil
}

// deletePending deletes the rows of the pending feedbacks ids, which
// their group claimed (see claimPending) and applied, in the transaction
// that writes their feedback rows.
func deletePending(tx *gorm.DB, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	r := tx.Where(inList(tx, "id", ids)).Delete(&pendingRow{})
	if r.Error != nil {
		return fmt.Errorf("store: pending feedback: %w", r.Error)
	}
	if r.RowsAffected != int64(len(ids)) {
		return fmt.Errorf("store: pending feedback: %d of %d claimed rows deleted", r.RowsAffected, len(ids))
	}
	return nil
}
