package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// QueueFeedback implements learning.FeedbackStore. plan reads the target
// (and the key among the applied feedback) on the read pool, outside any
// transaction; the pending row is then written in a group commit with
// every feedback queued meanwhile (pendingQueue), and the answer given
// once that is committed: what was acknowledged survives a crash of the
// process (see openSQLite's synchronous=NORMAL for an OS crash). A key
// applied between plan's read and the write is found again by the write
// (writePending) and answered as the applied first feedback.
func (db *DB) QueueFeedback(ctx context.Context, recallID string, in engram.FeedbackInput, plan engram.FeedbackPlanFunc) (*engram.FeedbackStatus, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	claimed, rec, err := db.readyRecall(ctx, tenant, recallID)
	if err != nil {
		return nil, err
	}
	input, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("store: feedback input: %w", err)
	}
	t := db.newFeedbackTx(db.r.WithContext(ctx), tenant, &feedbackMember{recallID: recallID, recall: rec}, newGroupLearning(), newHelpReads(), newGroupWrites())
	credits, prior, err := plan(ctx, t)
	if err != nil {
		return nil, err
	}
	if prior != nil {
		out := appliedStatus(prior)
		out.Replayed = true
		return out, nil
	}
	cj, err := json.Marshal(credits)
	if err != nil {
		return nil, fmt.Errorf("store: feedback credits: %w", err)
	}
	q := &queued{row: pendingRow{ID: t.id, TenantID: tenant, RecallID: recallID, IdempotencyKey: in.IdempotencyKey, Input: string(input),
		Credits: string(cj), CreatedAt: t.now}, claimed: claimed, done: make(chan struct{})}
	db.pending.submit(q)
	if q.err != nil {
		return nil, q.err
	}
	db.applier.signal()
	return q.out, nil
}

// queued is one feedback waiting for its pending row's group commit.
type queued struct {
	row     pendingRow
	claimed *recallRow // a recall claimed from the recall writer, to insert first
	out     *engram.FeedbackStatus
	err     error
	done    chan struct{}
}

// pendingQueue commits the pending rows of one process in groups: a
// feedback that arrives while a group is written waits, and the next
// group takes every one that waited, in one transaction and one INSERT.
type pendingQueue struct {
	db      *DB
	mu      sync.Mutex
	waiting []*queued
	running bool
}

func (p *pendingQueue) submit(q *queued) {
	p.mu.Lock()
	p.waiting = append(p.waiting, q)
	lead := !p.running
	p.running = true
	p.mu.Unlock()
	if lead {
		p.lead(q)
	}
	<-q.done
}

// lead writes groups until own is answered, then hands what waits on.
func (p *pendingQueue) lead(own *queued) {
	for {
		p.mu.Lock()
		batch := p.waiting
		p.waiting = nil
		if len(batch) == 0 {
			p.running = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		p.commit(batch)
		if own != nil && isClosed(own.done) {
			p.mu.Lock()
			more := len(p.waiting) > 0
			if !more {
				p.running = false
			}
			p.mu.Unlock()
			if more {
				go p.lead(nil)
			}
			return
		}
	}
}

// commit writes batch, running it again while it loses a race (another
// server's row with the same idempotency key, a deadlock), and answers
// every member.
func (p *pendingQueue) commit(batch []*queued) {
	db := p.db
	var err error
	for attempt := 0; ; attempt++ {
		err = db.w.Transaction(func(tx *gorm.DB) error { return db.writePending(tx, batch) })
		if err == nil || !db.lostRace(err) || attempt >= maxAttempts || backoff(context.Background(), attempt) != nil {
			break
		}
	}
	for _, q := range batch {
		if err != nil {
			q.out, q.err = nil, err
		}
		close(q.done)
	}
}

// writePending answers a repeated idempotency key (pending, or earlier
// in the batch) with the first feedback, and inserts the other rows in
// one statement.
func (db *DB) writePending(tx *gorm.DB, batch []*queued) error {
	first := map[[2]string]*queued{}
	var rows []pendingRow
	var claimed []*recallRow
	for _, q := range batch {
		if q.claimed != nil {
			claimed = append(claimed, q.claimed)
		}
	}
	if err := insertRecalls(tx, claimed); err != nil {
		return err
	}
	for _, q := range batch {
		q.out, q.err = nil, nil
		r := q.row
		if r.IdempotencyKey != "" {
			k := [2]string{r.TenantID, r.IdempotencyKey}
			if f := first[k]; f != nil {
				q.out = &engram.FeedbackStatus{FeedbackID: f.row.ID, Status: engram.FeedbackPending, Credits: f.out.Credits, Replayed: true}
				continue
			}
			var prior []pendingRow
			if err := tx.Where("tenant_id = ? AND idempotency_key = ?", r.TenantID, r.IdempotencyKey).Limit(1).Find(&prior).Error; err != nil {
				return fmt.Errorf("store: idempotency: %w", err)
			}
			if len(prior) > 0 {
				out, err := prior[0].status()
				if err != nil {
					return err
				}
				out.Replayed, q.out = true, out
				continue
			}
			// Applied since plan read the key: the applier deleted the
			// pending row in the transaction that wrote this one.
			var applied []feedbackRow
			if err := tx.Where("tenant_id = ? AND idempotency_key = ?", r.TenantID, r.IdempotencyKey).Limit(1).Find(&applied).Error; err != nil {
				return fmt.Errorf("store: idempotency: %w", err)
			}
			if len(applied) > 0 {
				var res engram.FeedbackResult
				if err := json.Unmarshal([]byte(applied[0].Result), &res); err != nil {
					return fmt.Errorf("store: stored feedback result: %w", err)
				}
				out := appliedStatus(&res)
				out.Replayed, q.out = true, out
				continue
			}
			first[k] = q
		}
		out, err := r.status()
		if err != nil {
			return err
		}
		q.out = out
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil
	}
	if err := tx.Create(&rows).Error; err != nil {
		return fmt.Errorf("store: queue feedback: %w", err)
	}
	return nil
}
