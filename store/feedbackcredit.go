package store

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// creditedRow is a memory credits moved, its row, and the version the
// row has in the store (base): m.Version is the one it gets.
type creditedRow struct {
	seq  int64
	m    *engram.Memory
	base int64
}

// creditColumns are the memory columns credits write.
var creditColumns = []struct {
	name  string
	value func(m *engram.Memory) any
}{
	{"confidence", func(m *engram.Memory) any { return m.Confidence }},
	{"reward", func(m *engram.Memory) any { return m.Reward }},
	{"up_count", func(m *engram.Memory) any { return m.UpCount }},
	{"down_count", func(m *engram.Memory) any { return m.DownCount }},
	{"stability", func(m *engram.Memory) any { return m.Stability }},
	{"needs_revision", func(m *engram.Memory) any { return m.NeedsRevision }},
	{"reinforced_at", func(m *engram.Memory) any { return m.ReinforcedAt.UTC() }},
	{"learned", func(m *engram.Memory) any { return m.Learned }},
	{"updated_at", func(m *engram.Memory) any { return m.UpdatedAt }},
	{"version", func(m *engram.Memory) any { return m.Version }},
}

// updateCreditedSQL writes creditColumns of the rows given as arrays
// (PostgreSQL), each at the version it was read at (base). One text for
// any number of rows, so that the statement is planned once per
// connection; a CASE on the row per column was a new statement, parsed
// and planned, for every group.
const updateCreditedSQL = `UPDATE memories AS m SET confidence = u.confidence, reward = u.reward, up_count = u.up_count,
	down_count = u.down_count, stability = u.stability, needs_revision = u.needs_revision, reinforced_at = u.reinforced_at,
	learned = u.learned, updated_at = u.updated_at, version = u.version
FROM unnest($1::bigint[], $2::bigint[], $3::double precision[], $4::double precision[], $5::bigint[], $6::bigint[],
	$7::double precision[], $8::boolean[], $9::timestamptz[], $10::text[], $11::timestamptz[], $12::bigint[])
	AS u(seq, base, confidence, reward, up_count, down_count, stability, needs_revision, reinforced_at, learned, updated_at, version)
WHERE m.seq = u.seq AND m.version = u.base`

// updateCredited writes the credited memories' learned fields and
// version in one statement, each row at the version it was read at
// (base). The rows are locked (PostgreSQL) or the writer is alone
// (SQLite), so none can have moved since it was read; a row that did is
// a lost race, retried.
func (db *DB) updateCredited(tx *gorm.DB, moved []creditedRow) error {
	if len(moved) == 0 {
		return nil
	}
	if db.dialect.name() == "sqlite" {
		return updateCreditedEach(tx, moved)
	}
	n := len(moved)
	seqs, bases, ups, downs, versions := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	confidences, rewards, stabilities := make([]float64, n), make([]float64, n), make([]float64, n)
	revisions, learned := make([]bool, n), make([]string, n)
	reinforced, updated := make([]time.Time, n), make([]time.Time, n)
	for i, r := range moved {
		m := r.m
		seqs[i], bases[i], ups[i], downs[i], versions[i] = r.seq, r.base, m.UpCount, m.DownCount, m.Version
		confidences[i], rewards[i], stabilities[i] = m.Confidence, m.Reward, m.Stability
		revisions[i], learned[i], reinforced[i], updated[i] = m.NeedsRevision, m.Learned, m.ReinforcedAt.UTC(), m.UpdatedAt
	}
	// Through the connection itself: gorm would spread the slices into
	// lists of parameters; the driver sends them as arrays.
	res, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context, updateCreditedSQL, seqs, bases, confidences, rewards, ups, downs,
		stabilities, revisions, reinforced, learned, updated, versions)
	if err != nil {
		return fmt.Errorf("store: credit memories: %w", err)
	}
	if got, err := res.RowsAffected(); err != nil || got != int64(n) {
		return errRetry
	}
	return nil
}

// updateCreditedEach is updateCredited a row at a time, in one prepared
// statement (SQLite: see execEach).
func updateCreditedEach(tx *gorm.DB, moved []creditedRow) error {
	var q strings.Builder
	q.WriteString("UPDATE memories SET ")
	for i, c := range creditColumns {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(c.name + " = ?")
	}
	q.WriteString(" WHERE seq = ? AND version = ?")
	args := make([][]any, len(moved))
	for i, r := range moved {
		a := make([]any, 0, len(creditColumns)+2)
		for _, c := range creditColumns {
			a = append(a, c.value(r.m))
		}
		args[i] = append(a, r.seq, r.base)
	}
	affected, err := execEach(tx, q.String(), args)
	if err != nil {
		return fmt.Errorf("store: credit memories: %w", err)
	}
	for _, n := range affected {
		if n != 1 {
			return errRetry
		}
	}
	return nil
}

// insertCredits saves credits (see insertRows).
func (db *DB) insertCredits(tx *gorm.DB, credits []creditRow) error {
	if len(credits) == 0 {
		return nil
	}
	args := make([][]any, len(credits))
	for i, c := range credits {
		args[i] = []any{c.FeedbackID, c.TenantID, c.MemoryID, c.Rater, c.Signal, c.Applied, c.CreatedAt}
	}
	return insertRows(tx, `INSERT INTO feedback_credits (feedback_id, tenant_id, memory_id, rater, signal, applied, created_at)`, "", args)
}

// creditedColumns are the memories columns a credit reads: the learned
// fields it moves, what names the memory's origin and its features (see
// engram.Memory.Features) and says whether a correction superseded it
// (see feedbackTx.LockMemories).
var creditedColumns = strings.Join([]string{"seq", "id", "tenant_id", "priority", "confidence", "reward", "up_count", "down_count",
	"needs_revision", "stability", "learned", "valid", "updated_at", "reinforced_at", "version",
	"agent_id", "type", "superseded_by", "key", "category", "tags", "content", sourceStart}, ", ")

// findCredited runs q (a memories query) for creditedColumns.
func findCredited(q *gorm.DB) ([]memoryRow, error) {
	rows, err := q.Model(&memoryRow{}).Select(creditedColumns).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memoryRow
	for rows.Next() {
		var r memoryRow
		var reinforced sql.NullTime
		if err := rows.Scan(&r.Seq, &r.ID, &r.TenantID, &r.Priority, &r.Confidence, &r.Reward, &r.UpCount, &r.DownCount,
			&r.NeedsRevision, &r.Stability, &r.Learned, &r.Valid, &r.UpdatedAt, &reinforced, &r.Version,
			&r.AgentID, &r.Type, &r.SupersededBy, &r.Key, &r.Category, &r.Tags, &r.Content, &r.Source); err != nil {
			return nil, err
		}
		if reinforced.Valid {
			r.ReinforcedAt = &reinforced.Time
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// insertFeedbacks writes a group's feedback rows, in order (see
// insertRows).
func (db *DB) insertFeedbacks(tx *gorm.DB, rows []feedbackRow) error {
	if len(rows) == 0 {
		return nil
	}
	args := make([][]any, len(rows))
	for i, r := range rows {
		args[i] = []any{r.ID, r.TenantID, r.UserID, r.InteractionID, r.RecallID, r.MemoryID, r.Thumb, r.Rating, r.Signal, r.Reason,
			r.Correction, r.Rater, r.IdempotencyKey, r.Result, r.CreatedAt}
	}
	return insertRows(tx, `INSERT INTO feedback (id, tenant_id, user_id, interaction_id, recall_id, memory_id, thumb, rating, signal,
		reason, correction, rater, idempotency_key, result, created_at)`, "", args)
}
