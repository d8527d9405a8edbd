package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"
)

type claimedRecall struct {
	row recallRow
	at  time.Time
}

// claimLimbo is how long a claimed recall row may be missing from the
// store before the writer writes it itself: longer than a feedback
// transaction takes with its retries, so it only comes into play when the
// claiming transaction failed for good.
const claimLimbo = 10 * time.Second

// claim returns the row of a recall of tenant still in the open batch,
// for a transaction that needs the recall to write it itself
// (insertRecalls) rather than wait for the batch: the row leaves the batch,
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
		if err := w.conn().Model(&recallRow{}).Where(inList(w.conn(), "id", chunk)).Pluck("id", &got).Error; err != nil {
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

// insertRecalls writes recall rows inside tx (see insertRows), but for
// those there already.
func insertRecalls(tx *gorm.DB, rows []*recallRow) error {
	if len(rows) == 0 {
		return nil
	}
	args := make([][]any, len(rows))
	for i, r := range rows {
		args[i] = []any{r.ID, r.TenantID, r.Query, jsonText(r.Route), jsonText(r.Items), r.TokenBudget, r.TokensUsed, r.AgentID, r.UserID,
			r.SessionID, r.CreatedAt}
	}
	if err := insertRows(tx, `INSERT INTO recalls (id, tenant_id, query, route, items, token_budget, tokens_used, agent_id, user_id,
		session_id, created_at)`, " ON CONFLICT DO NOTHING", args); err != nil {
		return fmt.Errorf("store: save recall: %w", err)
	}
	return nil
}

// readyRecall prepares a write that names a recall: a recall of this
// process still queued is claimed (returned twice: for the write's
// transaction to insert with insertRecalls, and as the recall it names);
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
// bits) and 80 random bits (newTimedID): a server that does not find a
// recall yet can tell a fresh id (still in another server's batch) from
// an unknown one.
func newRecallID() string { return newTimedID("rec") }

// newFeedbackID returns fb_ plus the time and random bits of newTimedID:
// the feedbacks of one group, made within milliseconds, share the first
// characters of their ids, so their entries in the indexes keyed by
// feedback id (feedback.id and the primary key of feedback_credits) fall
// in a few neighbouring pages, where 96 random bits put each feedback's
// rows on a page of its own anywhere in them, one more page to read and
// write back per feedback. (The encoding's digits sort before its
// letters, so ids are near in the index but not in time order.)
func newFeedbackID() string { return newTimedID("fb") }

// newTimedID returns prefix_ plus the wall-clock time in milliseconds (48
// bits, big-endian) and 80 random bits: as unguessable as any id needs,
// telling only when it was made.
func newTimedID(prefix string) string {
	b := make([]byte, 16)
	binary.BigEndian.PutUint64(b, uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + "_" + idEncoding.EncodeToString(b)
}

// recallTime reads the time out of an id made by newRecallID.
func recallTime(id string) (time.Time, bool) { return timedIDTime("rec", id) }

// timedIDTime reads the time out of an id made by newTimedID(prefix).
func timedIDTime(prefix, id string) (time.Time, bool) {
	s, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(s) != 26 {
		return time.Time{}, false
	}
	b, err := idEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b) >> 16)), true
}
