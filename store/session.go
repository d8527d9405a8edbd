package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// sessionRow is the sessions table: one L1 thread of a tenant.
type sessionRow struct {
	TenantID   string `gorm:"primaryKey"`
	ID         string `gorm:"primaryKey"`
	UserID     string
	ResourceID string
	Status     string
	Outcome    string
	Note       string
	NextSeq    int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ExpiresAt  time.Time
	ClosedAt   *time.Time
}

func (sessionRow) TableName() string { return "sessions" }

func (r *sessionRow) toSession() *engram.Session {
	return &engram.Session{ID: r.ID, UserID: r.UserID, ResourceID: r.ResourceID, Status: r.Status, Outcome: r.Outcome, Note: r.Note,
		Events: r.NextSeq - 1, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(),
		ClosedAt: utcPtr(r.ClosedAt)}
}

// sessionEventRow is the session_events table; Body is the event as JSON.
type sessionEventRow struct {
	TenantID  string `gorm:"primaryKey"`
	SessionID string `gorm:"primaryKey"`
	Seq       int64  `gorm:"primaryKey;autoIncrement:false"`
	Type      string
	Body      string
	MemoryID  string
	CreatedAt time.Time
}

func (sessionEventRow) TableName() string { return "session_events" }

func (r *sessionEventRow) toEvent() (*engram.SessionEvent, error) {
	var e engram.SessionEvent
	if err := json.Unmarshal([]byte(r.Body), &e); err != nil {
		return nil, fmt.Errorf("store: decode session event %s/%d: %w", r.SessionID, r.Seq, err)
	}
	e.Seq, e.Type, e.CreatedAt, e.MemoryID = r.Seq, r.Type, r.CreatedAt.UTC(), r.MemoryID
	return &e, nil
}

// AppendSessionEvents adds events to a session of the tenant in ctx in one
// transaction, creating the session (open, with resourceID) if it does not
// exist, and moves its expiry to now + ttl. It returns the session, the
// events with their sequence numbers and times, and the last message the
// session held before them (nil if none). ENOTFOUND for an expired
// session (until the cleaner deletes it), ECONFLICT for a closed one or a
// resourceID other than the session's.
func (db *DB) AppendSessionEvents(ctx context.Context, sessionID, resourceID string, events []*engram.SessionEvent, ttl time.Duration) (*engram.Session, *engram.SessionEvent, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	bodies := make([]string, len(events))
	for i, e := range events {
		c := *e
		c.Seq, c.Type, c.CreatedAt, c.MemoryID = 0, "", time.Time{}, ""
		b, err := json.Marshal(&c)
		if err != nil {
			return nil, nil, fmt.Errorf("store: encode session event: %w", err)
		}
		bodies[i] = string(b)
	}
	for attempt := 0; ; attempt++ {
		var sess *engram.Session
		var prev *engram.SessionEvent
		err := db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			now := db.now().UTC().Truncate(time.Microsecond)
			var rows []sessionRow
			if err := db.dialect.forUpdate(tx).Where("tenant_id = ? AND id = ?", tenant, sessionID).Limit(1).Find(&rows).Error; err != nil {
				return fmt.Errorf("store: find session: %w", err)
			}
			var row sessionRow
			if len(rows) == 0 {
				row = sessionRow{TenantID: tenant, ID: sessionID, UserID: engram.UserFromContext(ctx), ResourceID: resourceID, Status: engram.SessionOpen,
					NextSeq: 1, CreatedAt: now}
				if err := db.checkSessionEvents(&row, len(events)); err != nil {
					return err
				}
			} else {
				row = rows[0]
				if err := checkOpen(&row, now); err != nil {
					return err
				}
				if resourceID != "" && row.ResourceID != "" && resourceID != row.ResourceID {
					return engram.Errorf(engram.ECONFLICT, "session %s belongs to resource %s", sessionID, row.ResourceID)
				}
				if row.ResourceID == "" {
					row.ResourceID = resourceID
				}
				if err := db.checkSessionEvents(&row, len(events)); err != nil {
					return err
				}
				var last []sessionEventRow
				if err := tx.Where("tenant_id = ? AND session_id = ? AND type = ?", tenant, sessionID, engram.EventMessage).
					Order("seq DESC").Limit(1).Find(&last).Error; err != nil {
					return fmt.Errorf("store: find last message: %w", err)
				}
				if len(last) == 1 {
					var err error
					if prev, err = last[0].toEvent(); err != nil {
						return err
					}
				}
			}
			ins := make([]sessionEventRow, len(events))
			for i, e := range events {
				ins[i] = sessionEventRow{TenantID: tenant, SessionID: sessionID, Seq: row.NextSeq + int64(i), Type: e.Type,
					Body: bodies[i], CreatedAt: now}
			}
			row.NextSeq += int64(len(events))
			row.UpdatedAt, row.ExpiresAt = now, now.Add(ttl)
			if len(rows) == 0 {
				if err := db.createSession(tx, &row); err != nil {
					return err
				}
			} else if err := tx.Model(&sessionRow{}).Where("tenant_id = ? AND id = ?", tenant, sessionID).
				Updates(map[string]any{"resource_id": row.ResourceID, "next_seq": row.NextSeq, "updated_at": now,
					"expires_at": row.ExpiresAt}).Error; err != nil {
				return fmt.Errorf("store: update session: %w", err)
			}
			if len(ins) > 0 {
				if err := tx.CreateInBatches(ins, 200).Error; err != nil {
					return fmt.Errorf("store: add session events: %w", err)
				}
			}
			for i, e := range events {
				e.Seq, e.CreatedAt = ins[i].Seq, now
			}
			sess = row.toSession()
			return nil
		})
		switch {
		case err == nil:
			return sess, prev, nil
		case (db.dialect.isUniqueViolation(err) || db.dialect.isTransient(err)) && attempt < 5:
			continue // another server created the session or took its next numbers first
		default:
			return nil, nil, err
		}
	}
}

// SetEventMemories records, for events of a session of the tenant in ctx
// by sequence number, the L2 memory each became.
func (db *DB) SetEventMemories(ctx context.Context, sessionID string, ids map[int64]string) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	return db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for seq, id := range ids {
			if err := tx.Model(&sessionEventRow{}).Where("tenant_id = ? AND session_id = ? AND seq = ?", tenant, sessionID, seq).
				Update("memory_id", id).Error; err != nil {
				return fmt.Errorf("store: set event memory: %w", err)
			}
		}
		return nil
	})
}

// checkOpen refuses an expired (ENOTFOUND) or closed (ECONFLICT) session.
func checkOpen(row *sessionRow, now time.Time) error {
	if !row.ExpiresAt.After(now) {
		return engram.Errorf(engram.ENOTFOUND, "no session %s", row.ID)
	}
	if row.Status == engram.SessionClosed {
		return engram.Errorf(engram.ECONFLICT, "session %s is closed", row.ID)
	}
	return nil
}

// FindSession returns a live session of the tenant in ctx; ENOTFOUND when
// there is none or it has expired.
func (db *DB) FindSession(ctx context.Context, sessionID string) (*engram.Session, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	row, err := db.liveSession(db.r.WithContext(ctx), tenant, sessionID)
	if err != nil {
		return nil, err
	}
	return row.toSession(), nil
}

// liveSession reads the tenant's session sessionID through q unless it has
// expired; ENOTFOUND.
func (db *DB) liveSession(q *gorm.DB, tenant, sessionID string) (*sessionRow, error) {
	var rows []sessionRow
	if err := q.Where("tenant_id = ? AND id = ? AND expires_at > ?", tenant, sessionID, db.now().UTC()).
		Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find session: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "no session %s", sessionID)
	}
	return &rows[0], nil
}

// createSession inserts a new session row in tx and holds the tenant to
// its sessions quota (EQUOTA, see checkQuota).
func (db *DB) createSession(tx *gorm.DB, row *sessionRow) error {
	if err := tx.Create(row).Error; err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	return db.checkQuota(tx, row.TenantID, usage{Sessions: 1})
}

// checkSessionEvents refuses, with ETOOLARGE, n more events in a session
// that would then hold more than Options.MaxSessionEvents. It runs under
// the session row's lock (a PostgreSQL row lock; SQLite's one writer),
// so servers sharing a database never overshoot the cap. ETOOLARGE
// rather than EQUOTA: the cap bounds one session (a thread that long
// should be ended and a new one started), not the tenant's allowance.
func (db *DB) checkSessionEvents(row *sessionRow, n int) error {
	limit := db.maxSessionEvents
	if held := row.NextSeq - 1; limit > 0 && held+int64(n) > limit {
		return engram.Errorf(engram.ETOOLARGE, "session %s holds %d events and takes at most %d (sessions.max_events); end it and start another",
			row.ID, held, limit)
	}
	return nil
}

// SessionEventsPage returns a live session and one page of its events
// (see engram.EventPage): oldest first, after the position of the cursor
// or, with page.Newest, the last ones. Only the page is read, so a long
// session costs a reader no more than one page. ENOTFOUND; EINVALID for
// a bad limit or a cursor not made for this session.
func (db *DB) SessionEventsPage(ctx context.Context, sessionID string, page engram.EventPage) (*engram.EventList, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := db.pageLimit(page.Limit)
	if err != nil {
		return nil, err
	}
	fingerprint := tenant + "\x1fsession-events\x1f" + sessionID
	after, err := db.decodeCursor(page.Cursor, fingerprint)
	if err != nil {
		return nil, err
	}
	out := &engram.EventList{}
	err = db.r.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row, err := db.liveSession(tx, tenant, sessionID)
		if err != nil {
			return err
		}
		out.Session = row.toSession()
		q := tx.Where("tenant_id = ? AND session_id = ?", tenant, sessionID)
		if page.Newest {
			q = q.Where("seq > ?", max(row.NextSeq-1-int64(limit), after))
		} else {
			q = q.Where("seq > ?", after)
		}
		var evs []sessionEventRow
		if err := q.Order("seq").Limit(limit + 1).Find(&evs).Error; err != nil {
			return fmt.Errorf("store: list session events: %w", err)
		}
		if len(evs) > limit {
			evs = evs[:limit]
			out.NextCursor = db.encodeCursor(evs[limit-1].Seq, fingerprint)
		}
		out.Events = make([]*engram.SessionEvent, len(evs))
		for i := range evs {
			var err error
			if out.Events[i], err = evs[i].toEvent(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SessionEvents returns a live session and all its events, oldest first,
// for the readers that need the whole session (its context, its end);
// sessions.max_events bounds how many that is. ENOTFOUND.
func (db *DB) SessionEvents(ctx context.Context, sessionID string) (*engram.Session, []*engram.SessionEvent, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	var sess *engram.Session
	var out []*engram.SessionEvent
	err = db.r.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row, err := db.liveSession(tx, tenant, sessionID)
		if err != nil {
			return err
		}
		sess = row.toSession()
		var evs []sessionEventRow
		if err := tx.Where("tenant_id = ? AND session_id = ?", tenant, sessionID).Order("seq").Find(&evs).Error; err != nil {
			return fmt.Errorf("store: list session events: %w", err)
		}
		out = make([]*engram.SessionEvent, len(evs))
		for i := range evs {
			var err error
			if out[i], err = evs[i].toEvent(); err != nil {
				return err
			}
		}
		return nil
	})
	return sess, out, err
}

// CloseSession closes a live open session with its outcome and note.
// ENOTFOUND, ECONFLICT when it is already closed.
func (db *DB) CloseSession(ctx context.Context, sessionID, outcome, note string) (*engram.Session, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	var sess *engram.Session
	err = db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := db.now().UTC().Truncate(time.Microsecond)
		var rows []sessionRow
		if err := db.dialect.forUpdate(tx).Where("tenant_id = ? AND id = ?", tenant, sessionID).Limit(1).Find(&rows).Error; err != nil {
			return fmt.Errorf("store: find session: %w", err)
		}
		if len(rows) == 0 {
			return engram.Errorf(engram.ENOTFOUND, "no session %s", sessionID)
		}
		row := rows[0]
		if err := checkOpen(&row, now); err != nil {
			return err
		}
		row.Status, row.Outcome, row.Note, row.UpdatedAt, row.ClosedAt = engram.SessionClosed, outcome, note, now, &now
		if err := tx.Model(&sessionRow{}).Where("tenant_id = ? AND id = ?", tenant, sessionID).
			Updates(map[string]any{"status": row.Status, "outcome": outcome, "note": note, "updated_at": now, "closed_at": now}).Error; err != nil {
			return fmt.Errorf("store: close session: %w", err)
		}
		sess = row.toSession()
		return nil
	})
	return sess, err
}

// DeleteExpiredSessions deletes, across tenants, the sessions that expired
// before now with their events and session documents, and returns how many
// sessions it deleted. Resource documents stay: other sessions share them.
func (db *DB) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	var n int64
	err := db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var rows []sessionRow
		if err := tx.Select("tenant_id", "id").Where("expires_at <= ?", db.now().UTC()).Find(&rows).Error; err != nil {
			return fmt.Errorf("store: find expired sessions: %w", err)
		}
		for _, r := range rows {
			if err := tx.Where("tenant_id = ? AND session_id = ?", r.TenantID, r.ID).Delete(&sessionEventRow{}).Error; err != nil {
				return fmt.Errorf("store: delete session events: %w", err)
			}
			if err := tx.Where("tenant_id = ? AND scope = ? AND scope_id = ?", r.TenantID, engram.ScopeSession, r.ID).
				Delete(&workingStateRow{}).Error; err != nil {
				return fmt.Errorf("store: delete session state: %w", err)
			}
			if err := tx.Where("tenant_id = ? AND id = ?", r.TenantID, r.ID).Delete(&sessionRow{}).Error; err != nil {
				return fmt.Errorf("store: delete session: %w", err)
			}
		}
		n = int64(len(rows))
		return nil
	})
	return n, err
}

// FindSessions returns up to limit live (unexpired) sessions of the
// tenant in ctx, open and closed, the most recently active first.
func (db *DB) FindSessions(ctx context.Context, limit int) ([]*engram.Session, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, engram.Errorf(engram.EINVALID, "limit must be positive")
	}
	var rows []sessionRow
	if err := db.r.WithContext(ctx).Where("tenant_id = ? AND expires_at > ?", tenant, db.now().UTC()).
		Order("updated_at DESC, id").Limit(limit).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	out := make([]*engram.Session, len(rows))
	for i := range rows {
		out[i] = rows[i].toSession()
	}
	return out, nil
}
