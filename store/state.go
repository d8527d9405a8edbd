package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// workingStateRow is the working_states table.
type workingStateRow struct {
	TenantID  string `gorm:"primaryKey"`
	Scope     string `gorm:"primaryKey"`
	ScopeID   string `gorm:"primaryKey"`
	Document  string
	Schema    string
	Version   int64
	UpdatedAt time.Time
}

func (workingStateRow) TableName() string { return "working_states" }

// FindWorkingState returns the tenant's document of a scope, or ENOTFOUND
// when none was set.
func (db *DB) FindWorkingState(ctx context.Context, scope, scopeID string) (*engram.WorkingState, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	var rows []workingStateRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ? AND scope = ? AND scope_id = ?", tenant, scope, scopeID).
		Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find working state: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "no %s state %s", scope, scopeID)
	}
	return rows[0].toState(), nil
}

func (r *workingStateRow) toState() *engram.WorkingState {
	t := r.UpdatedAt.UTC()
	s := &engram.WorkingState{Scope: r.Scope, ScopeID: r.ScopeID, State: json.RawMessage(r.Document), Version: r.Version, UpdatedAt: &t}
	if r.Schema != "" {
		s.Schema = json.RawMessage(r.Schema)
	}
	return s
}

// UpdateWorkingState reads the tenant's document of a scope (nil when
// none was set), passes it to change and stores what change returns as
// the next version, all in one transaction, so that concurrent updates
// on any server apply one after the other. When sessionID is not "" the
// session must be live, or absent: then this write creates it, open and
// expiring after ttl, as its first event would (a session is created by
// its first write, whichever it is; EQUOTA past the sessions quota).
// ENOTFOUND for an expired session. An error from change writes nothing.
func (db *DB) UpdateWorkingState(ctx context.Context, sessionID, scope, scopeID string, ttl time.Duration, change func(cur *engram.WorkingState) (*engram.WorkingState, error)) (*engram.WorkingState, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		var out *engram.WorkingState
		err := db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			now := db.now().UTC().Truncate(time.Microsecond)
			if sessionID != "" {
				var sess []sessionRow
				if err := tx.Where("tenant_id = ? AND id = ?", tenant, sessionID).Limit(1).Find(&sess).Error; err != nil {
					return fmt.Errorf("store: find session: %w", err)
				}
				switch {
				case len(sess) == 0:
					row := sessionRow{TenantID: tenant, ID: sessionID, Status: engram.SessionOpen, NextSeq: 1, CreatedAt: now,
						UpdatedAt: now, ExpiresAt: now.Add(ttl)}
					if err := db.createSession(tx, &row); err != nil {
						return err
					}
				case !sess[0].ExpiresAt.After(now):
					return engram.Errorf(engram.ENOTFOUND, "no session %s", sessionID)
				}
			}
			var rows []workingStateRow
			if err := db.dialect.forUpdate(tx).Where("tenant_id = ? AND scope = ? AND scope_id = ?", tenant, scope, scopeID).
				Limit(1).Find(&rows).Error; err != nil {
				return fmt.Errorf("store: find working state: %w", err)
			}
			var cur *engram.WorkingState
			if len(rows) == 1 {
				cur = rows[0].toState()
			}
			next, err := change(cur)
			if err != nil {
				return err
			}
			row := workingStateRow{TenantID: tenant, Scope: scope, ScopeID: scopeID, Document: string(next.State),
				Schema: string(next.Schema), Version: 1, UpdatedAt: now}
			if len(rows) == 1 {
				row.Version = rows[0].Version + 1
				err = tx.Model(&workingStateRow{}).Where("tenant_id = ? AND scope = ? AND scope_id = ?", tenant, scope, scopeID).
					Updates(map[string]any{"document": row.Document, "schema": row.Schema, "version": row.Version, "updated_at": now}).Error
			} else {
				err = tx.Create(&row).Error
			}
			if err != nil {
				return fmt.Errorf("store: save working state: %w", err)
			}
			out = row.toState()
			return nil
		})
		var e *engram.Error
		switch {
		case err == nil:
			return out, nil
		case errors.As(err, &e):
			return nil, err
		case (db.dialect.isUniqueViolation(err) || db.dialect.isTransient(err)) && attempt < 5:
			continue
		default:
			return nil, err
		}
	}
}
