package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"

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
	SessionID   string
	CreatedAt   time.Time
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
}

// SaveRecall stores a recall under a new id (set on r) and counts an
// access on every injected memory. Access statistics are not versioned
// changes: they bump neither version nor history.
func (db *DB) SaveRecall(ctx context.Context, r *engram.Recall, agentID, sessionID string) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	r.ID = newID("rec")
	route, _ := json.Marshal(r.Route)
	refs := make([]recallItemRef, len(r.Items))
	ids := make([]string, len(r.Items))
	for i, it := range r.Items {
		refs[i] = recallItemRef{ID: it.ID, Version: it.Version, Score: it.Score, Tokens: it.Tokens, UsedSummary: it.UsedSummary, Breakdown: it.Breakdown}
		ids[i] = it.ID
	}
	if h := r.HeldBack; h != nil {
		refs = append(refs, recallItemRef{ID: h.ID, Version: h.Version, Score: h.Score, Breakdown: h.Breakdown, HeldBack: true})
	}
	items, _ := json.Marshal(refs)
	row := recallRow{ID: r.ID, TenantID: tenant, Query: r.Query, Route: string(route), Items: string(items),
		TokenBudget: r.TokenBudget, TokensUsed: r.TokensUsed, AgentID: agentID, SessionID: sessionID, CreatedAt: r.CreatedAt.UTC()}
	sort.Strings(ids) // one lock order with every other writer
	return db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return fmt.Errorf("store: save recall: %w", err)
		}
		if len(ids) > 0 {
			if err := tx.Exec(`UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id IN ? AND `+
				db.dialect.unindexed("tenant_id")+` = ?`, r.CreatedAt.UTC(), ids, tenant).Error; err != nil {
				return fmt.Errorf("store: count access: %w", err)
			}
		}
		return nil
	})
}

// PinnedMemories returns the live P0 (identity) memories visible to the
// agent, newest first: they qualify for every recall.
func (db *DB) PinnedMemories(ctx context.Context, agentID string, limit int) ([]*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := findLean(db.r.WithContext(ctx).Where(`tenant_id = ? AND priority = ? AND valid AND NOT archived
		AND (expires_at IS NULL OR expires_at > ?) AND (agent_id = '' OR agent_id = ?)`, tenant, string(engram.P0), db.now().UTC(), agentID).
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
		AND (expires_at IS NULL OR expires_at > ?) AND (agent_id = '' OR agent_id = ?)`, tenant, db.now().UTC(), agentID).
		Order("seq DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: recent memories: %w", err)
	}
	out := make([]*engram.Memory, len(rows))
	for i := range rows {
		out[i] = rows[i].toMemory()
	}
	return out, nil
}
