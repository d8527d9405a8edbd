package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/engram-memory/engram"
)

type recallRow struct {
	ID          string `gorm:"primaryKey"`
	TenantID    string
	Query       string
	Route       string
	Items       string
	TokenBudget int
	TokensUsed  int
	AgentID     string
	UserID      string
	SessionID   string
	CreatedAt   time.Time

	parsed []recallItemRef // Items decoded, once (see items)
}

func (recallRow) TableName() string { return "recalls" }

// recallItemRef is what a stored recall keeps of each injected memory:
// enough to credit feedback to the exact version that was shown.
type recallItemRef struct {
	ID          string                `json:"id"`
	Version     int64                 `json:"version"`
	Score       float64               `json:"score"`
	Tokens      int                   `json:"tokens"`
	UsedSummary bool                  `json:"used_summary,omitempty"`
	Breakdown   engram.ScoreBreakdown `json:"breakdown"`
	// HeldBack marks the memory exploration held back: recorded with the
	// recall, not injected, and not counted as an access.
	HeldBack bool `json:"held_back,omitempty"`
	// Probe marks the memory a kind probe chose and left where the model
	// ranked it (see engram.Recall.Probe): recorded beside the items, and
	// never an injection or access of its own.
	Probe bool `json:"probe,omitempty"`
}

// shown reports whether the ref is an injected item: neither the memory
// exploration held back nor the record of a kind probe's control arm.
func (r recallItemRef) shown() bool { return !r.HeldBack && !r.Probe }

// SaveRecall gives the recall a new id (set on r) and hands its record
// and the access counts of its memories to the process's recall writer,
// which commits them in batches off the recall's path (see recallWriter):
// it returns before they are committed. Access statistics are not
// versioned changes: they bump neither version nor history.
func (db *DB) SaveRecall(ctx context.Context, r *engram.Recall, agentID, sessionID string) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	r.ID = newRecallID()
	route, _ := json.Marshal(r.Route)
	refs := make([]recallItemRef, len(r.Items))
	for i, it := range r.Items {
		refs[i] = recallItemRef{ID: it.ID, Version: it.Version, Score: it.Score, Tokens: it.Tokens, UsedSummary: it.UsedSummary, Breakdown: it.Breakdown}
	}
	if h := r.HeldBack; h != nil {
		refs = append(refs, recallItemRef{ID: h.ID, Version: h.Version, Score: h.Score, Breakdown: h.Breakdown, HeldBack: true})
	}
	if p := r.Probe; p != nil {
		refs = append(refs, recallItemRef{ID: p.ID, Version: p.Version, Score: p.Score, Breakdown: p.Breakdown, Probe: true})
	}
	items, _ := json.Marshal(refs)
	return db.recalls.add(recallRow{ID: r.ID, TenantID: tenant, Query: r.Query, Route: string(route), Items: string(items),
		TokenBudget: r.TokenBudget, TokensUsed: r.TokensUsed, AgentID: agentID, UserID: engram.UserFromContext(ctx), SessionID: sessionID, CreatedAt: r.CreatedAt.UTC(), parsed: refs}, refs)
}

// PinnedMemories returns the live P0 (identity) memories visible to the
// agent and the context's user (shared ones and the user's own), newest
// first: they qualify for every recall.
func (db *DB) PinnedMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := findLean(db.r.WithContext(ctx).Where(`tenant_id = ? AND priority = ? AND valid AND NOT archived
		AND (expires_at IS NULL OR expires_at > ?) AND (agent_id = '' OR agent_id = ?) AND user_id IN ('', ?)`, tenant, string(engram.P0), db.now().UTC(), agentID,
		engram.UserFromContext(ctx)).
		Order("seq DESC").Limit(limit))
	if err != nil {
		return nil, fmt.Errorf("store: pinned memories: %w", err)
	}
	out := make([]*engram.Memory, len(rows))
	for i := range rows {
		out[i] = rows[i].toMemory()
	}
	return out, nil
}

// RecentMemories returns up to limit live memories visible to the agent,
// newest first, for the default read block (/v1/context).
func (db *DB) RecentMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	var rows []memoryRow
	if err := db.r.WithContext(ctx).Select(readColumns).Where(`tenant_id = ? AND valid AND NOT archived
		AND (expires_at IS NULL OR expires_at > ?) AND (agent_id = '' OR agent_id = ?) AND user_id IN ('', ?)`, tenant, db.now().UTC(), agentID, engram.UserFromContext(ctx)).
		Order("seq DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: recent memories: %w", err)
	}
	out := make([]*engram.Memory, len(rows))
	for i := range rows {
		out[i] = rows[i].toMemory()
	}
	return out, nil
}
