package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// feedbackStoryRow is a feedback row with its interaction's text.
type feedbackStoryRow struct {
	Seq           int64
	ID            string
	InteractionID string
	RecallID      string
	MemoryID      string
	Thumb         string
	Rating        int
	Signal        float64
	Reason        string
	Correction    string
	Rater         string
	Result        string
	CreatedAt     time.Time
	Prompt        *string
	Response      *string
	Category      *string
}

// FindFeedback implements engram.ConsoleInsights: the feedback stream
// with each judged interaction's prompt and answer, filtered. A feedback
// on an interaction carries the interaction's recall id.
func (db *DB) FindFeedback(ctx context.Context, f engram.FeedbackFilter) ([]*engram.FeedbackRecord, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if f.Limit < 1 || f.Limit > db.rules.Limits.MaxListLimit {
		return nil, engram.Errorf(engram.EINVALID, "limit must be between 1 and %d", db.rules.Limits.MaxListLimit)
	}
	q := db.r.WithContext(ctx).Table("feedback AS f").
		Select("f.seq, f.id, f.interaction_id, COALESCE(NULLIF(f.recall_id, ''), i.recall_id, '') AS recall_id, f.memory_id, f.thumb, f.rating, f.signal, f.reason, f.correction, f.rater, f.result, f.created_at, i.prompt AS prompt, i.response AS response, i.category AS category").
		Joins("LEFT JOIN interactions i ON i.tenant_id = f.tenant_id AND i.id = f.interaction_id").
		Where("f.tenant_id = ?", tenant)
	if f.Before > 0 {
		q = q.Where("f.seq < ?", f.Before)
	}
	switch f.Signal {
	case "":
	case engram.ThumbUp:
		q = q.Where("f.signal > 0")
	case engram.ThumbDown:
		q = q.Where("f.signal < 0")
	default:
		return nil, engram.Errorf(engram.EINVALID, "signal must be up or down")
	}
	if f.Rater != "" {
		q = q.Where("f.rater = ?", f.Rater)
	}
	if f.Category != "" {
		q = q.Where("i.category = ?", f.Category)
	}
	if !f.Since.IsZero() {
		q = q.Where("f.created_at >= ?", f.Since.UTC())
	}
	if !f.Until.IsZero() {
		q = q.Where("f.created_at < ?", f.Until.UTC())
	}
	if f.RecallID != "" {
		q = q.Where("(f.recall_id = ? OR i.recall_id = ?)", f.RecallID, f.RecallID)
	}
	if f.MemoryID != "" {
		q = q.Where("(f.memory_id = ? OR EXISTS (SELECT 1 FROM feedback_credits c WHERE c.tenant_id = f.tenant_id AND c.feedback_id = f.id AND c.memory_id = ?))",
			f.MemoryID, f.MemoryID)
	}
	if t := strings.TrimSpace(f.Query); t != "" {
		like := "%" + strings.ToLower(likeEscaper.Replace(t)) + "%"
		q = q.Where(`(LOWER(f.reason) LIKE ? ESCAPE '\' OR LOWER(f.correction) LIKE ? ESCAPE '\' OR `+
			`LOWER(COALESCE(i.prompt, '')) LIKE ? ESCAPE '\' OR LOWER(COALESCE(i.response, '')) LIKE ? ESCAPE '\')`, like, like, like, like)
	}
	var rows []feedbackStoryRow
	if err := q.Order("f.seq DESC").Limit(f.Limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list feedback: %w", err)
	}
	out := make([]*engram.FeedbackRecord, len(rows))
	for i, r := range rows {
		rec := &engram.FeedbackRecord{Seq: r.Seq, ID: r.ID, InteractionID: r.InteractionID, RecallID: r.RecallID,
			MemoryID: r.MemoryID, Thumb: r.Thumb, Rating: r.Rating, Signal: r.Signal, Reason: r.Reason,
			Correction: r.Correction, Rater: r.Rater, CreatedAt: r.CreatedAt.UTC(),
			Prompt: deref(r.Prompt), Response: deref(r.Response), Category: deref(r.Category)}
		var res engram.FeedbackResult
		if json.Unmarshal([]byte(r.Result), &res) == nil && res.FeedbackID != "" {
			rec.Result = &res
		}
		out[i] = rec
	}
	return out, nil
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// FindRecallRecord implements engram.ConsoleInsights.
func (db *DB) FindRecallRecord(ctx context.Context, id string) (*engram.RecallRecord, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	g := db.r.WithContext(ctx)
	row, err := db.findRecall(g, tenant, id)
	if err != nil {
		return nil, err
	}
	rec := &engram.RecallRecord{ID: row.ID, Query: row.Query, TokenBudget: row.TokenBudget, TokensUsed: row.TokensUsed,
		AgentID: row.AgentID, SessionID: row.SessionID, CreatedAt: row.CreatedAt.UTC()}
	_ = json.Unmarshal([]byte(row.Route), &rec.Route)
	var refs []recallItemRef
	_ = json.Unmarshal([]byte(row.Items), &refs)
	for _, it := range refs {
		item := engram.RecallItem{ID: it.ID, Version: it.Version, Score: it.Score, Tokens: it.Tokens,
			UsedSummary: it.UsedSummary, Breakdown: it.Breakdown}
		if it.HeldBack {
			rec.HeldBack = &item
			continue
		}
		if it.Probe {
			continue
		}
		rec.Items = append(rec.Items, item)
	}
	var ins []interactionRow
	if err := g.Where("tenant_id = ? AND recall_id = ?", tenant, id).Order("seq").Find(&ins).Error; err != nil {
		return nil, fmt.Errorf("store: find recall interactions: %w", err)
	}
	for i := range ins {
		rec.Interactions = append(rec.Interactions, ins[i].toInteraction())
	}
	return rec, nil
}
