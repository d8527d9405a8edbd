package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

type interactionRow struct {
	Seq            int64 `gorm:"primaryKey;autoIncrement"`
	ID             string
	TenantID       string
	Prompt         string
	Messages       *string
	Response       string
	RecallID       string
	SessionID      string
	TurnID         string
	Model          string
	GroupKey       string
	Category       string
	LastSignal     *float64
	LastKind       string
	LastFeedbackID string
	CreatedAt      time.Time
}

func (interactionRow) TableName() string { return "interactions" }

func (r *interactionRow) toInteraction() *engram.Interaction {
	in := &engram.Interaction{ID: r.ID, Prompt: r.Prompt, Response: r.Response, RecallID: r.RecallID, SessionID: r.SessionID,
		TurnID: r.TurnID, Model: r.Model, GroupKey: r.GroupKey, CreatedAt: r.CreatedAt.UTC()}
	if r.Messages != nil {
		_ = json.Unmarshal([]byte(*r.Messages), &in.Messages)
	}
	return in
}

type feedbackRow struct {
	Seq            int64 `gorm:"primaryKey;autoIncrement"`
	ID             string
	TenantID       string
	InteractionID  string
	RecallID       string
	MemoryID       string
	Thumb          string
	Rating         int
	Signal         float64
	Reason         string
	Correction     string
	Rater          string
	IdempotencyKey string
	Result         string
	CreatedAt      time.Time
}

func (feedbackRow) TableName() string { return "feedback" }

type creditRow struct {
	FeedbackID string
	TenantID   string
	MemoryID   string
	Rater      string
	Signal     float64
	Applied    bool
	CreatedAt  time.Time
}

func (creditRow) TableName() string { return "feedback_credits" }

type pairRow struct {
	Seq                   int64 `gorm:"primaryKey;autoIncrement"`
	ID                    string
	TenantID              string
	Kind                  string
	DedupeKey             string
	Prompt                string
	Messages              *string
	Chosen                string
	Rejected              string
	Margin                float64
	Category              string
	ChosenInteractionID   string
	RejectedInteractionID string
	FeedbackIDs           string `gorm:"column:feedback_ids"`
	ChosenMemories        string
	RejectedMemories      string
	CreatedAt             time.Time
}

func (pairRow) TableName() string { return "pairs" }

// groupKey gathers the regenerations of one turn: the session and turn
// id when the client sends a turn id, else the session and the prompt
// with white space folded.
func groupKey(in *engram.Interaction) string {
	if in.TurnID != "" {
		return "turn:" + in.SessionID + "\x1f" + in.TurnID
	}
	prompt := strings.Join(strings.Fields(in.Prompt), " ")
	if len(in.Messages) > 0 {
		folded := make([]engram.Message, len(in.Messages))
		for i, m := range in.Messages {
			folded[i] = engram.Message{Role: m.Role, Content: strings.Join(strings.Fields(m.Content), " ")}
		}
		b, _ := json.Marshal(folded)
		prompt = string(b)
	}
	sum := sha256.Sum256([]byte(prompt))
	return "prompt:" + in.SessionID + "\x1f" + hex.EncodeToString(sum[:16])
}

// CreateInteraction implements engram.FeedbackService. The interaction
// takes the category of its recall's top routed domain, for filtering
// exports. ENOTFOUND for a recall id outside the tenant.
func (db *DB) CreateInteraction(ctx context.Context, in *engram.Interaction) (*engram.Interaction, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	row := interactionRow{ID: newID("int"), TenantID: tenant, Prompt: in.Prompt, Response: in.Response, RecallID: in.RecallID,
		SessionID: in.SessionID, TurnID: in.TurnID, Model: in.Model, GroupKey: groupKey(in), CreatedAt: db.now().UTC()}
	if len(in.Messages) > 0 {
		b, _ := json.Marshal(in.Messages)
		s := string(b)
		row.Messages = &s
	}
	g := db.w.WithContext(ctx)
	if in.RecallID != "" {
		claimed, rec, err := db.readyRecall(ctx, tenant, in.RecallID)
		if err != nil {
			return nil, err
		}
		if err := insertRecall(g, claimed); err != nil {
			return nil, err
		}
		if rec == nil {
			if rec, err = db.findRecall(g, tenant, in.RecallID); err != nil {
				return nil, err
			}
		}
		var route engram.Route
		if json.Unmarshal([]byte(rec.Route), &route) == nil && len(route.Domains) > 0 {
			row.Category = route.Domains[0].Name
		}
	}
	if err := db.retry(ctx, func() error { return g.Create(&row).Error }); err != nil {
		return nil, fmt.Errorf("store: create interaction: %w", err)
	}
	return row.toInteraction(), nil
}

func (db *DB) findRecall(g *gorm.DB, tenant, id string) (*recallRow, error) {
	var rows []recallRow
	if err := g.Where("tenant_id = ? AND id = ?", tenant, id).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find recall: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "recall %q not found", id)
	}
	return &rows[0], nil
}

func (r *recallRow) memoryRefs() []engram.MemoryRef {
	var items []recallItemRef
	_ = json.Unmarshal([]byte(r.Items), &items)
	refs := make([]engram.MemoryRef, 0, len(items))
	for _, it := range items {
		if !it.HeldBack {
			refs = append(refs, engram.MemoryRef{ID: it.ID, Version: it.Version})
		}
	}
	return refs
}

// scores returns the score the recall gave each memory it injected, and
// the id of the memory exploration held back ("" when none).
func (r *recallRow) scores() (map[string]float64, string) {
	var items []recallItemRef
	_ = json.Unmarshal([]byte(r.Items), &items)
	out := make(map[string]float64, len(items))
	held := ""
	for _, it := range items {
		if it.HeldBack {
			held = it.ID
			continue
		}
		out[it.ID] = it.Score
	}
	return out, held
}

// SubmitFeedback records a feedback and, in the same transaction,
// credits the memories its target injected (one memory event each),
// updates the interaction's latest signal and makes the preference pairs
// it completes. Concurrent feedbacks of a tenant share one transaction
// (see feedbackGroups); the result is returned once it is committed. A
// repeated idempotency key returns the first result with Replayed set and
// changes nothing. ENOTFOUND for a target outside the tenant. The input
// must already be valid (see learning.Feedback).
func (db *DB) SubmitFeedback(ctx context.Context, in engram.FeedbackInput, policy engram.FeedbackPolicy) (*engram.FeedbackResult, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	claimed, rec, err := db.readyRecall(ctx, tenant, in.RecallID)
	if err != nil {
		return nil, err
	}
	m := &feedbackMember{ctx: ctx, in: in, policy: policy, claimed: claimed, recall: rec, done: make(chan struct{})}
	db.feedbacks.submit(tenant, m)
	<-m.done
	return m.res, m.err
}

// submitFeedback applies one feedback in tx, a group's transaction (see
// feedbackGroups): rec is the recall in.RecallID names when known already
// (nil: it is read here); what the feedback adds to the helpfulness rows
// and to its rater's reputation is returned (nil: nothing), for the group
// to write at its end; the reads of those rows add what g, the group's
// earlier feedbacks, adds to them.
func (db *DB) submitFeedback(ctx context.Context, tx *gorm.DB, tenant string, in engram.FeedbackInput, policy engram.FeedbackPolicy,
	rec *recallRow, g *groupLearning) (*engram.FeedbackResult, *learningTx, error) {
	if in.IdempotencyKey != "" {
		var prior []feedbackRow
		if err := tx.Where("tenant_id = ? AND idempotency_key = ?", tenant, in.IdempotencyKey).Limit(1).Find(&prior).Error; err != nil {
			return nil, nil, fmt.Errorf("store: idempotency: %w", err)
		}
		if len(prior) == 1 {
			var res engram.FeedbackResult
			if err := json.Unmarshal([]byte(prior[0].Result), &res); err != nil {
				return nil, nil, fmt.Errorf("store: stored feedback result: %w", err)
			}
			res.Replayed = true
			return &res, nil, nil
		}
	}
	now := db.now().UTC()
	fb := feedbackRow{ID: newID("fb"), TenantID: tenant, InteractionID: in.InteractionID, RecallID: in.RecallID,
		MemoryID: in.MemoryID, Thumb: in.Thumb, Rating: in.Rating, Signal: in.Signal(), Reason: in.Reason,
		Correction: in.Correction, Rater: in.Rater, IdempotencyKey: in.IdempotencyKey, CreatedAt: now}

	var inter *interactionRow
	var query, heldBack string
	weights, scores := map[string]float64{}, map[string]float64{}
	switch {
	case in.InteractionID != "":
		var rows []interactionRow
		if err := tx.Where("tenant_id = ? AND id = ?", tenant, in.InteractionID).Limit(1).Find(&rows).Error; err != nil {
			return nil, nil, fmt.Errorf("store: find interaction: %w", err)
		}
		if len(rows) == 0 {
			return nil, nil, engram.Errorf(engram.ENOTFOUND, "interaction %q not found", in.InteractionID)
		}
		inter = &rows[0]
		fb.RecallID = inter.RecallID
		if inter.RecallID != "" {
			rec, err := db.findRecall(tx, tenant, inter.RecallID)
			if err != nil {
				return nil, nil, err
			}
			scores, heldBack = rec.scores()
			weights, query = policy.Shares(scores), rec.Query
		}
	case in.RecallID != "":
		if rec == nil {
			var err error
			if rec, err = db.findRecall(tx, tenant, in.RecallID); err != nil {
				return nil, nil, err
			}
		}
		scores, heldBack = rec.scores()
		weights, query = policy.Shares(scores), rec.Query
	default:
		if _, err := findRow(tx, tenant, "id = ?", in.MemoryID); err != nil {
			return nil, nil, err
		}
		weights[in.MemoryID], scores[in.MemoryID] = 1, 1
	}
	targets := make([]string, 0, len(weights))
	for id, w := range weights {
		if w > 0 {
			targets = append(targets, id)
		}
	}
	res := &engram.FeedbackResult{FeedbackID: fb.ID, Signal: fb.Signal, Credited: []engram.CreditedMemory{}, Pairs: []string{}}
	var l *learningTx
	// A recall that injected nothing credits nothing and teaches nothing.
	if fb.Signal != 0 && len(targets) > 0 {
		// One order for every writer, so concurrent feedbacks on PostgreSQL
		// lock the same memories in the same order: memories ("mem_…")
		// before reflections ("refl_…"), each by id.
		sort.Strings(targets)
		var memories, reflections []string
		for _, id := range targets {
			if strings.HasPrefix(id, reflectionPrefix) {
				reflections = append(reflections, id)
			} else {
				memories = append(memories, id)
			}
		}
		rows, err := db.lockCredited(tx, memories)
		if err != nil {
			return nil, nil, err
		}
		if l, err = db.startLearning(tx, tenant, fb, rows, scores, policy, g); err != nil {
			return nil, nil, err
		}
		if res.Credited, err = db.credit(ctx, tx, tenant, fb, rows, weights, l, query, policy); err != nil {
			return nil, nil, err
		}
		for _, cm := range res.Credited {
			if !cm.Capped {
				l.credited(cm.ID)
			}
		}
		for _, id := range reflections {
			cr, err := db.creditReflection(tx, tenant, fb, id, weights[id], policy)
			if err != nil {
				return nil, nil, err
			}
			if cr != nil {
				res.Reflections = append(res.Reflections, *cr)
			}
		}
		l.finish(heldBack, in.MemoryID == "")
	}
	if inter != nil {
		pairs, err := db.updateInteraction(tx, tenant, inter, fb, policy)
		if err != nil {
			return nil, nil, err
		}
		res.Pairs = pairs
		if fb.Correction != "" && fb.Correction != inter.Response {
			if res.Knowledge, err = db.correct(ctx, tx, tenant, inter, fb, res.Credited, weights, policy); err != nil {
				return nil, nil, err
			}
		}
	}
	// The feedback row goes in last, with its result: one statement.
	stored, _ := json.Marshal(res)
	fb.Result = string(stored)
	if err := tx.Create(&fb).Error; err != nil {
		return nil, nil, fmt.Errorf("store: save feedback: %w", err)
	}
	return res, l, nil
}

// lockCredited reads and locks the rows of the memories ids (sorted) in
// one statement, in id order (the one lock order of every writer on
// PostgreSQL), by id alone: the caller checks the tenant per row.
func (db *DB) lockCredited(tx *gorm.DB, ids []string) ([]memoryRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := findCredited(db.dialect.forUpdate(tx).Where("id IN ?", ids).Order("id"))
	if err != nil {
		return nil, fmt.Errorf("store: memories to credit: %w", err)
	}
	return rows, nil
}

// credit applies one feedback to the tenant's memories of rows (see
// lockCredited), in a fixed number of statements however many there are:
// the rater's applied credits within the window are counted in one; each credited memory's learned fields are
// updated in id order and recorded as a delta event (see
// engram.MemoryDelta); the credits go in one multi-row insert. A memory
// the rater's cap is reached for is recorded as capped and left alone; a
// tombstoned memory, or one gone from the tenant, is skipped.
func (db *DB) credit(ctx context.Context, tx *gorm.DB, tenant string, fb feedbackRow, rows []memoryRow, weights map[string]float64,
	l *learningTx, query string, policy engram.FeedbackPolicy) ([]engram.CreditedMemory, error) {
	out := []engram.CreditedMemory{}
	if len(rows) == 0 {
		return out, nil
	}
	ids := make([]string, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
	}
	limit, window := policy.RaterLimit()
	// Counted under the memories' row locks, so concurrent votes of one
	// rater see each other and the cap holds.
	var counts []struct {
		MemoryID string
		N        int64
	}
	if err := tx.Raw(`SELECT memory_id, COUNT(*) AS n FROM feedback_credits
		WHERE tenant_id = ? AND memory_id IN ? AND rater = ? AND applied AND created_at > ? GROUP BY memory_id`,
		tenant, ids, fb.Rater, fb.CreatedAt.Add(-window)).Scan(&counts).Error; err != nil {
		return nil, fmt.Errorf("store: rater credits: %w", err)
	}
	used := make(map[string]int64, len(counts))
	for _, c := range counts {
		used[c.MemoryID] = c.N
	}
	now := db.now().UTC().Truncate(time.Microsecond)
	credits := make([]creditRow, 0, len(rows))
	var moved []creditedRow
	for i := range rows {
		row := &rows[i]
		if row.TenantID != tenant || !row.Valid {
			continue
		}
		m := row.toMemory()
		capped := used[m.ID] >= int64(limit)
		weight := weights[m.ID] * l.raterWeight
		if !capped {
			before := *m
			policy.Credit(m, fb.Signal, weight, query, l.answers)
			m.Version, m.UpdatedAt = before.Version+1, now
			moved = append(moved, creditedRow{seq: row.Seq, m: m})
			if err := db.appendDelta(ctx, tenant, m.ID, m.Version, engram.DeltaOf(fb.ID, &before, m)); err != nil {
				return nil, err
			}
		}
		credits = append(credits, creditRow{FeedbackID: fb.ID, TenantID: tenant, MemoryID: m.ID, Rater: fb.Rater,
			Signal: fb.Signal, Applied: !capped, CreatedAt: fb.CreatedAt})
		out = append(out, engram.CreditedMemory{ID: m.ID, Version: m.Version, Weight: weight, Reward: m.Reward,
			Confidence: m.Confidence, Stability: m.Stability, NeedsRevision: m.NeedsRevision, UpCount: m.UpCount,
			DownCount: m.DownCount, Capped: capped})
	}
	if err := db.updateCredited(tx, moved); err != nil {
		return nil, err
	}
	if err := db.insertCredits(tx, credits); err != nil {
		return nil, fmt.Errorf("store: save credits: %w", err)
	}
	return out, nil
}

// creditedRow is a memory a credit moved, and its row.
type creditedRow struct {
	seq int64
	m   *engram.Memory
}

// creditColumns are the memory columns a credit writes, with their
// PostgreSQL types; the version goes up by one.
var creditColumns = []struct {
	name, typ string
	value     func(m *engram.Memory) any
}{
	{"confidence", "double precision", func(m *engram.Memory) any { return m.Confidence }},
	{"reward", "double precision", func(m *engram.Memory) any { return m.Reward }},
	{"up_count", "bigint", func(m *engram.Memory) any { return m.UpCount }},
	{"down_count", "bigint", func(m *engram.Memory) any { return m.DownCount }},
	{"stability", "double precision", func(m *engram.Memory) any { return m.Stability }},
	{"needs_revision", "boolean", func(m *engram.Memory) any { return m.NeedsRevision }},
	{"reinforced_at", "timestamptz", func(m *engram.Memory) any { return m.ReinforcedAt.UTC() }},
	{"learned", "text", func(m *engram.Memory) any { return m.Learned }},
	{"updated_at", "timestamptz", func(m *engram.Memory) any { return m.UpdatedAt }},
}

// updateCredited writes the credited memories' learned fields in one
// statement (a CASE on the row per column), each row at the version it
// was read at plus one. The rows are locked (PostgreSQL) or the writer is
// alone (SQLite), so none can have moved since it was read; a row that
// did is a lost race, retried.
func (db *DB) updateCredited(tx *gorm.DB, moved []creditedRow) error {
	if len(moved) == 0 {
		return nil
	}
	if db.dialect.name() == "sqlite" {
		return updateCreditedEach(tx, moved)
	}
	var q strings.Builder
	args := make([]any, 0, (2*len(creditColumns)+2)*len(moved))
	q.WriteString("UPDATE memories SET ")
	for i, c := range creditColumns {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(c.name + " = CASE seq")
		for _, r := range moved {
			q.WriteString(" WHEN ? THEN " + db.dialect.param(c.typ))
			args = append(args, r.seq, c.value(r.m))
		}
		q.WriteString(" END")
	}
	q.WriteString(", version = version + 1 WHERE ")
	for i, r := range moved {
		if i > 0 {
			q.WriteString(" OR ")
		}
		q.WriteString("(seq = ? AND version = ?)")
		args = append(args, r.seq, r.m.Version-1)
	}
	res := tx.Exec(q.String(), args...)
	if res.Error != nil {
		return fmt.Errorf("store: credit memories: %w", res.Error)
	}
	if res.RowsAffected != int64(len(moved)) {
		return errRetry
	}
	return nil
}

// updateCreditedEach is updateCredited a row at a time, in one prepared
// statement (SQLite: see execEach).
func updateCreditedEach(tx *gorm.DB, moved []creditedRow) error {
	var q strings.Builder
	q.WriteString("UPDATE memories SET ")
	for _, c := range creditColumns {
		q.WriteString(c.name + " = ?, ")
	}
	q.WriteString("version = version + 1 WHERE seq = ? AND version = ?")
	args := make([][]any, len(moved))
	for i, r := range moved {
		a := make([]any, 0, len(creditColumns)+2)
		for _, c := range creditColumns {
			a = append(a, c.value(r.m))
		}
		args[i] = append(a, r.seq, r.m.Version-1)
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

// insertCredits saves credits: one multi-row statement on PostgreSQL, a
// row at a time in one prepared statement on SQLite (see execEach).
func (db *DB) insertCredits(tx *gorm.DB, credits []creditRow) error {
	if len(credits) == 0 {
		return nil
	}
	if db.dialect.name() != "sqlite" {
		return tx.CreateInBatches(credits, 500).Error
	}
	args := make([][]any, len(credits))
	for i, c := range credits {
		args[i] = []any{c.FeedbackID, c.TenantID, c.MemoryID, c.Rater, c.Signal, c.Applied, c.CreatedAt}
	}
	_, err := execEach(tx, `INSERT INTO feedback_credits (feedback_id, tenant_id, memory_id, rater, signal, applied, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, args)
	return err
}

// creditedColumns are the memories columns a credit reads: the learned
// fields it moves, and what names the memory's origin and says whether a
// correction superseded it (see startLearning).
var creditedColumns = strings.Join([]string{"seq", "id", "tenant_id", "priority", "confidence", "reward", "up_count", "down_count",
	"needs_revision", "stability", "learned", "valid", "updated_at", "reinforced_at", "version",
	"agent_id", "type", "superseded_by", sourceStart}, ", ")

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
			&r.AgentID, &r.Type, &r.SupersededBy, &r.Source); err != nil {
			return nil, err
		}
		if reinforced.Valid {
			r.ReinforcedAt = &reinforced.Time
		}
		r.Tags = "[]"
		out = append(out, r)
	}
	return out, rows.Err()
}

// reflectionPrefix starts the id of a reflection, which a recall may
// inject beside memories.
const reflectionPrefix = "refl_"

// creditReflection counts one feedback's vote on an injected reflection,
// under the same per-rater cap as memories; a reflection gone from the
// tenant is skipped (nil).
func (db *DB) creditReflection(tx *gorm.DB, tenant string, fb feedbackRow, id string, weight float64, policy engram.FeedbackPolicy) (*engram.CreditedReflection, error) {
	var rows []reflectionRow
	if err := db.dialect.forUpdate(tx).Where("tenant_id = ? AND id = ?", tenant, id).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find reflection: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	r := rows[0]
	limit, window := policy.RaterLimit()
	var used int64
	if err := tx.Model(&creditRow{}).Where("tenant_id = ? AND memory_id = ? AND rater = ? AND applied AND created_at > ?",
		tenant, id, fb.Rater, fb.CreatedAt.Add(-window)).Count(&used).Error; err != nil {
		return nil, fmt.Errorf("store: rater credits: %w", err)
	}
	capped := used >= int64(limit)
	if !capped {
		switch policy.Vote(fb.Signal, weight) {
		case 1:
			r.UpCount++
		case -1:
			r.DownCount++
		}
		if err := tx.Model(&reflectionRow{}).Where("seq = ?", r.Seq).
			Updates(map[string]any{"up_count": r.UpCount, "down_count": r.DownCount}).Error; err != nil {
			return nil, fmt.Errorf("store: credit reflection: %w", err)
		}
	}
	if err := tx.Create(&creditRow{FeedbackID: fb.ID, TenantID: tenant, MemoryID: id, Rater: fb.Rater, Signal: fb.Signal,
		Applied: !capped, CreatedAt: fb.CreatedAt}).Error; err != nil {
		return nil, fmt.Errorf("store: save credit: %w", err)
	}
	return &engram.CreditedReflection{ID: id, Weight: weight, UpCount: r.UpCount, DownCount: r.DownCount, Capped: capped}, nil
}

// updateInteraction records the interaction's latest judgement and makes
// the pairs it completes, as the policy decides: a correction pair when the
// feedback carries a correction that differs from the answer, and a pair
// with every other judged answer of the same group that the policy pairs.
// A pair is made once per pair of answers (or correction), whatever the
// later feedback.
func (db *DB) updateInteraction(tx *gorm.DB, tenant string, inter *interactionRow, fb feedbackRow, policy engram.FeedbackPolicy) ([]string, error) {
	kind := "thumb"
	if fb.Rating != 0 {
		kind = "rating"
	}
	// Lock the whole regeneration group, in one order, before reading it:
	// two answers judged at once must see each other, or neither would
	// make their pair.
	var locked []int64
	if err := db.dialect.forUpdate(tx.Model(&interactionRow{})).Where("tenant_id = ? AND group_key = ?", tenant, inter.GroupKey).
		Order("seq DESC").Limit(maxPeers+1).Pluck("seq", &locked).Error; err != nil {
		return nil, fmt.Errorf("store: lock regenerations: %w", err)
	}
	if err := tx.Model(&interactionRow{}).Where("seq = ?", inter.Seq).
		Updates(map[string]any{"last_signal": fb.Signal, "last_kind": kind, "last_feedback_id": fb.ID}).Error; err != nil {
		return nil, fmt.Errorf("store: update interaction: %w", err)
	}
	refs := func(in *interactionRow) ([]engram.MemoryRef, error) {
		if in.RecallID == "" {
			return []engram.MemoryRef{}, nil
		}
		rec, err := db.findRecall(tx, tenant, in.RecallID)
		if err != nil {
			return nil, err
		}
		return rec.memoryRefs(), nil
	}
	mine, err := refs(inter)
	if err != nil {
		return nil, err
	}
	var made []string
	add := func(p *pairRow) error {
		p.ID, p.TenantID, p.Prompt, p.Messages, p.Category, p.CreatedAt = newID("pair"), tenant, inter.Prompt, inter.Messages, inter.Category, fb.CreatedAt
		var n int64
		if err := tx.Model(&pairRow{}).Where("tenant_id = ? AND dedupe_key = ?", tenant, p.DedupeKey).Count(&n).Error; err != nil {
			return fmt.Errorf("store: pair dedupe: %w", err)
		}
		if n > 0 {
			return nil
		}
		if err := tx.Create(p).Error; err != nil {
			return fmt.Errorf("store: save pair: %w", err)
		}
		made = append(made, p.ID)
		return nil
	}
	if fb.Correction != "" && fb.Correction != inter.Response {
		sum := sha256.Sum256([]byte(fb.Correction))
		if err := add(&pairRow{Kind: engram.PairCorrection, DedupeKey: "correction:" + inter.ID + ":" + hex.EncodeToString(sum[:16]), Chosen: fb.Correction,
			Rejected: inter.Response, Margin: policy.CorrectionMargin(fb.Signal), RejectedInteractionID: inter.ID,
			FeedbackIDs: mustJSON([]string{fb.ID}), ChosenMemories: mustJSON(mine), RejectedMemories: mustJSON(mine)}); err != nil {
			return nil, err
		}
	}
	var peers []interactionRow
	if err := tx.Where("tenant_id = ? AND group_key = ? AND id <> ? AND last_signal IS NOT NULL", tenant, inter.GroupKey, inter.ID).
		Order("seq DESC").Limit(maxPeers).Find(&peers).Error; err != nil {
		return nil, fmt.Errorf("store: find regenerations: %w", err)
	}
	for i := range peers {
		peer := &peers[i]
		if peer.Response == inter.Response {
			continue
		}
		pkind, margin, ok := policy.Pair(engram.Judgement{Signal: fb.Signal, Rating: kind == "rating"},
			engram.Judgement{Signal: *peer.LastSignal, Rating: peer.LastKind == "rating"})
		if !ok {
			continue
		}
		peerRefs, err := refs(peer)
		if err != nil {
			return nil, err
		}
		chosen, rejected := inter, peer
		chosenRefs, rejectedRefs := mine, peerRefs
		chosenFB, rejectedFB := fb.ID, peer.LastFeedbackID
		if fb.Signal < *peer.LastSignal {
			chosen, rejected, chosenRefs, rejectedRefs, chosenFB, rejectedFB = peer, inter, peerRefs, mine, peer.LastFeedbackID, fb.ID
		}
		a, b := inter.ID, peer.ID
		if b < a {
			a, b = b, a
		}
		if err := add(&pairRow{Kind: pkind, DedupeKey: "answers:" + a + "|" + b, Chosen: chosen.Response, Rejected: rejected.Response,
			Margin: margin, ChosenInteractionID: chosen.ID, RejectedInteractionID: rejected.ID,
			FeedbackIDs: mustJSON([]string{chosenFB, rejectedFB}), ChosenMemories: mustJSON(chosenRefs), RejectedMemories: mustJSON(rejectedRefs)}); err != nil {
			return nil, err
		}
	}
	if made == nil {
		made = []string{}
	}
	return made, nil
}

// maxPeers bounds a regeneration group as one feedback sees it: the
// newest answers only, so that a common prompt such as "hi" in a tenant
// without sessions cannot make one thumb lock or compare thousands of rows.
const maxPeers = 20

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (r *pairRow) toPair() *engram.Pair {
	p := &engram.Pair{ID: r.ID, Kind: r.Kind, Prompt: r.Prompt, Chosen: r.Chosen, Rejected: r.Rejected, Margin: r.Margin,
		Category: r.Category, ChosenInteractionID: r.ChosenInteractionID, RejectedInteractionID: r.RejectedInteractionID,
		CreatedAt: r.CreatedAt.UTC()}
	if r.Messages != nil {
		_ = json.Unmarshal([]byte(*r.Messages), &p.Messages)
	}
	_ = json.Unmarshal([]byte(r.FeedbackIDs), &p.FeedbackIDs)
	_ = json.Unmarshal([]byte(r.ChosenMemories), &p.ChosenMemories)
	_ = json.Unmarshal([]byte(r.RejectedMemories), &p.RejectedMemories)
	return p
}

// exportPage is how many rows an export reads at a time: memory stays
// constant however many pairs are exported.
const exportPage = 500

// exportFilter applies a PairFilter's time range and category to q, whose
// rows have created_at and category columns.
func exportFilter(q *gorm.DB, f engram.PairFilter) *gorm.DB {
	if f.Since != nil {
		q = q.Where("created_at >= ?", f.Since.UTC())
	}
	if f.Until != nil {
		q = q.Where("created_at < ?", f.Until.UTC())
	}
	if f.Category != nil {
		q = q.Where("category = ?", *f.Category)
	}
	return q
}

func exportFingerprint(kind, tenant string, f engram.PairFilter) string {
	t := func(p *time.Time) string {
		if p == nil {
			return "-"
		}
		return p.UTC().Format(time.RFC3339Nano)
	}
	c := "\x00"
	if f.Category != nil {
		c = *f.Category
	}
	return strings.Join([]string{kind, tenant, t(f.Since), t(f.Until), c, fmt.Sprint(f.MinMargin)}, "\x1f")
}

// EachPair implements engram.FeedbackService: pairs oldest first, at most
// f.Limit of them (0: all), read a page at a time. The cursor it returns
// resumes after the last pair given to fn, for the same filter.
func (db *DB) EachPair(ctx context.Context, f engram.PairFilter, fn func(*engram.Pair) error) (string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return "", err
	}
	fp := exportFingerprint("pairs", tenant, f)
	after, err := db.decodeCursor(f.Cursor, fp)
	if err != nil {
		return "", err
	}
	sent := 0
	for {
		q := exportFilter(db.r.WithContext(ctx).Where("tenant_id = ? AND seq > ?", tenant, after), f)
		if f.MinMargin > 0 {
			q = q.Where("margin >= ?", f.MinMargin)
		}
		var rows []pairRow
		if err := q.Order("seq").Limit(exportPage).Find(&rows).Error; err != nil {
			return "", fmt.Errorf("store: export pairs: %w", err)
		}
		for i := range rows {
			if f.Limit > 0 && sent == f.Limit {
				return db.encodeCursor(after, fp), nil
			}
			if err := fn(rows[i].toPair()); err != nil {
				return "", err
			}
			after = rows[i].Seq
			sent++
		}
		if len(rows) < exportPage {
			return "", nil
		}
	}
}

// EachUnpaired implements engram.FeedbackService: every interaction whose
// latest feedback is not neutral, labelled by its sign (KTO-style data),
// oldest first; paging and cursor as EachPair. MinMargin applies to the
// signal's magnitude.
func (db *DB) EachUnpaired(ctx context.Context, f engram.PairFilter, fn func(*engram.Unpaired) error) (string, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return "", err
	}
	fp := exportFingerprint("unpaired", tenant, f)
	after, err := db.decodeCursor(f.Cursor, fp)
	if err != nil {
		return "", err
	}
	sent := 0
	for {
		q := exportFilter(db.r.WithContext(ctx).Where("tenant_id = ? AND seq > ? AND last_signal IS NOT NULL AND last_signal <> 0", tenant, after), f)
		if f.MinMargin > 0 {
			q = q.Where("(last_signal >= ? OR last_signal <= ?)", f.MinMargin, -f.MinMargin)
		}
		var rows []interactionRow
		if err := q.Order("seq").Limit(exportPage).Find(&rows).Error; err != nil {
			return "", fmt.Errorf("store: export unpaired: %w", err)
		}
		for i := range rows {
			if f.Limit > 0 && sent == f.Limit {
				return db.encodeCursor(after, fp), nil
			}
			in := rows[i].toInteraction()
			if err := fn(&engram.Unpaired{Prompt: in.Prompt, Messages: in.Messages, Completion: in.Response,
				Label: *rows[i].LastSignal > 0, CreatedAt: in.CreatedAt}); err != nil {
				return "", err
			}
			after = rows[i].Seq
			sent++
		}
		if len(rows) < exportPage {
			return "", nil
		}
	}
}

// correct stores what a correction became (policy.Correction) in the
// feedback's transaction: the new memory, or the live memory that already
// says the same, and the superseded memories marked needs_revision with
// superseded_by naming it. Memories the rater's cap kept the feedback
// from crediting are not superseded either. A correction that cannot be a
// valid memory stays a preference pair only (nil).
func (db *DB) correct(ctx context.Context, tx *gorm.DB, tenant string, inter *interactionRow, fb feedbackRow,
	credited []engram.CreditedMemory, shares map[string]float64, policy engram.FeedbackPolicy) (*engram.Knowledge, error) {
	var rested []engram.Rested
	for _, c := range credited {
		if c.Capped {
			continue
		}
		row, err := findRow(tx, tenant, "id = ?", c.ID)
		if err != nil {
			return nil, err
		}
		rested = append(rested, engram.Rested{Memory: row.toMemory(), Share: shares[c.ID]})
	}
	m, ids := policy.Correction(fb.Correction, inter.toInteraction(), fb.ID, inter.Category, rested)
	if m == nil {
		return nil, nil
	}
	db.rules.ApplyDefaults(m)
	if db.rules.Validate(m) != nil {
		return nil, nil
	}
	results := make([]*engram.CreateResult, 1)
	if err := db.insertBatch(ctx, tx, tenant, []*engram.Memory{m}, results); err != nil {
		return nil, err
	}
	created := results[0].Memory
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := db.mutateTx(ctx, tx, tenant, "id = ?", id, nil, engram.ActionFeedback, func(_ *gorm.DB, m *engram.Memory) (bool, error) {
			if !m.Valid || (m.NeedsRevision && m.SupersededBy == created.ID) {
				return false, nil
			}
			m.NeedsRevision, m.SupersededBy = true, created.ID
			return true, nil
		}); err != nil {
			return nil, err
		}
	}
	return &engram.Knowledge{MemoryID: created.ID, Superseded: append([]string{}, ids...)}, nil
}
