package engram

import (
	"context"
	"time"
)

// Prune actions.
const (
	PruneArchive = "archive" // archived: kept, listed with include_archived, never recalled
	PruneDelete  = "delete"  // tombstoned: gone from reads, its history kept
)

// PruneFilter selects the memories of the caller's tenant that a prune
// archives or deletes. Every field that is set must hold; at least one of
// Before, Category and BelowRetention must be set, so that a prune never
// empties a tenant by accident (that is ResetTenant). The filter grows
// field by field without changing the meaning of the others.
type PruneFilter struct {
	// Action is PruneArchive or PruneDelete.
	Action string `json:"action"`
	// Before keeps memories created before this time.
	Before *time.Time `json:"before,omitempty"`
	// Category keeps memories of this category.
	Category *string `json:"category,omitempty"`
	// BelowRetention keeps memories whose Ebbinghaus retention now (see
	// Retention) is below this value in (0, 1]; P0 memories never decay
	// and are never below it.
	BelowRetention *float64 `json:"below_retention,omitempty"`
	// UserID keeps exactly this end user's memories ("" the shared ones);
	// nil keeps every user's. It narrows a prune and is not enough alone:
	// to erase a user, forget them (DELETE /v1/users/{id}).
	UserID *string `json:"user_id,omitempty"`
	// DryRun counts what would be pruned and changes nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// Validate checks f.
func (f *PruneFilter) Validate() error {
	if f.Action != PruneArchive && f.Action != PruneDelete {
		return Errorf(EINVALID, "action must be %q or %q", PruneArchive, PruneDelete)
	}
	if f.Before == nil && f.Category == nil && f.BelowRetention == nil {
		return Errorf(EINVALID, "name at least one of before, category and below_retention (to empty a tenant, reset it)")
	}
	if f.BelowRetention != nil && !(*f.BelowRetention > 0 && *f.BelowRetention <= 1) {
		return Errorf(EINVALID, "below_retention must be in (0, 1]")
	}
	if f.UserID != nil {
		if err := CheckUserID(*f.UserID); err != nil {
			return err
		}
	}
	if f.Category != nil && *f.Category == "" {
		return Errorf(EINVALID, "category must not be empty")
	}
	return nil
}

// PruneResult says what a prune matched and did.
type PruneResult struct {
	Matched  int      `json:"matched"`
	Archived int      `json:"archived"`
	Deleted  int      `json:"deleted"`
	DryRun   bool     `json:"dry_run"`
	IDs      []string `json:"ids"`
}

// ResetResult counts the rows a tenant reset removed, by table.
type ResetResult struct {
	Tenant  string           `json:"tenant"`
	Removed map[string]int64 `json:"removed"`
}

// LifecycleService prunes and resets the tenant in the context.
type LifecycleService interface {
	// PruneMemories archives or deletes the memories f selects. EINVALID.
	PruneMemories(ctx context.Context, f PruneFilter) (*PruneResult, error)
	// ResetTenant removes all of the tenant's data — memories and their
	// history, recalls, interactions, feedback, pairs, reflections,
	// sessions, learned state — and keeps the tenant and its keys.
	ResetTenant(ctx context.Context) (*ResetResult, error)
}
