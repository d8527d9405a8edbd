package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// eventRow is the memory_events table: one row per change of a memory.
type eventRow struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	TenantID  string
	MemoryID  string
	Version   int64
	Action    string
	Before    *string
	After     *string
	Delta     *string // a credit's engram.MemoryDelta; Before and After are NULL then
	Links     *string // a link or unlink event's []engram.Link (see eventLinks)
	Aliases   *string // an alias or unalias event's []engram.Alias (see eventAliasesKey)
	Actor     string
	CreatedAt time.Time
	FeedSeq   *int64 // NULL until the transaction's end (see sequence)
}

func (eventRow) TableName() string { return "memory_events" }

// appendEvent records a memory event of action, with the memory before and
// after it (either nil), among the events the write inserts at its end
// (see writeTx).
func (db *DB) appendEvent(ctx context.Context, tenant, action string, before, after *engram.Memory) error {
	ev := eventRow{TenantID: tenant, Action: action, CreatedAt: db.now().UTC().Truncate(time.Microsecond)}
	ref := after
	if ref == nil {
		ref = before
	}
	ev.MemoryID, ev.Version = ref.ID, ref.Version
	for dst, m := range map[**string]*engram.Memory{&ev.Before: before, &ev.After: after} {
		if m != nil {
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			s := string(b)
			*dst = &s
		}
	}
	actor, _ := json.Marshal(engram.ActorFromContext(ctx))
	ev.Actor = string(actor)
	if links, ok := ctx.Value(eventLinksKey{}).(*[]*engram.Link); ok && len(*links) > 0 {
		b, err := json.Marshal(*links)
		if err != nil {
			return err
		}
		s := string(b)
		ev.Links = &s
	}
	if aliases, ok := ctx.Value(eventAliasesKey{}).(*[]*engram.Alias); ok && len(*aliases) > 0 {
		b, err := json.Marshal(*aliases)
		if err != nil {
			return err
		}
		s := string(b)
		ev.Aliases = &s
	}
	p, ok := ctx.Value(pendingKey{}).(*pendingEvents)
	if !ok {
		return errors.New("store: a memory event outside writeTx")
	}
	p.rows = append(p.rows, ev)
	return nil
}

// appendDelta records a feedback credit of memory id, now at version, as
// a delta event (see engram.MemoryDelta).
func (db *DB) appendDelta(ctx context.Context, tenant, id string, version int64, d *engram.MemoryDelta) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	delta := string(b)
	actor, _ := json.Marshal(engram.ActorFromContext(ctx))
	p, ok := ctx.Value(pendingKey{}).(*pendingEvents)
	if !ok {
		return errors.New("store: a memory event outside writeTx")
	}
	p.rows = append(p.rows, eventRow{TenantID: tenant, MemoryID: id, Version: version, Action: engram.ActionFeedback,
		Delta: &delta, Actor: string(actor), CreatedAt: d.UpdatedAt})
	return nil
}

// delta decodes a delta event's engram.MemoryDelta; its time is the
// event's.
func (r *eventRow) delta() (*engram.MemoryDelta, error) {
	var d engram.MemoryDelta
	if err := json.Unmarshal([]byte(*r.Delta), &d); err != nil {
		return nil, fmt.Errorf("store: decode event %d: %w", r.ID, err)
	}
	d.UpdatedAt = r.CreatedAt.UTC()
	return &d, nil
}

// errRetry marks an optimistic write that lost a race without the client
// having asked for a version check; mutate retries it on fresh data.
var errRetry = errors.New("store: concurrent update")

// mutate loads the memory, lets change modify it, validates and writes it
// as the next version with an event, all in one transaction. The write is
// conditional on the version it read (compare-and-swap); when another
// writer got there first, the change is re-applied to the new state, or
// fails with ECONFLICT if the caller pinned a version.
func (db *DB) mutate(ctx context.Context, where string, arg any, expect *int64, action string,
	change func(tx *gorm.DB, m *engram.Memory) (bool, error)) (*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		var out *engram.Memory
		err := db.writeTx(ctx, tenant, func(ctx context.Context, tx *gorm.DB) error {
			var err error
			out, err = db.mutateTx(ctx, tx, tenant, where, arg, expect, action, change)
			return err
		})
		switch {
		case err == nil:
			return out, nil
		case db.dialect.isTransient(err) && attempt < maxAttempts:
			// A deadlock victim: the transaction was rolled back whole.
			if err := backoff(ctx, attempt); err != nil {
				return nil, err
			}
			continue
		case (errors.Is(err, errRetry) || db.dialect.uniqueRule(err) == ruleEventVersion) && attempt < 5:
			if expect != nil {
				return nil, engram.Errorf(engram.ECONFLICT, "memory changed concurrently; reload and retry")
			}
			continue
		case db.dialect.isUniqueViolation(err):
			return nil, engram.Errorf(engram.ECONFLICT, "another memory in this category has the same content, or the key is taken")
		case errors.Is(err, errRetry):
			return nil, engram.Errorf(engram.ECONFLICT, "memory changed concurrently; reload and retry")
		default:
			return nil, err
		}
	}
}

// mutateTx is one read-modify-write of mutate inside tx; it returns
// errRetry when another writer changed the memory since it was read.
func (db *DB) mutateTx(ctx context.Context, tx *gorm.DB, tenant, where string, arg any, expect *int64, action string,
	change func(tx *gorm.DB, m *engram.Memory) (bool, error)) (*engram.Memory, error) {
	row, err := findRow(db.dialect.forUpdate(tx), tenant, where, arg)
	if err != nil {
		return nil, err
	}
	before := row.toMemory()
	if expect != nil && *expect != before.Version {
		return nil, engram.Errorf(engram.ECONFLICT, "memory is at version %d, not %d; reload and retry", before.Version, *expect)
	}
	m := row.toMemory()
	changed, err := change(tx, m)
	if err != nil {
		return nil, err
	}
	if !changed {
		return before, nil
	}
	if err := db.rules.Validate(m); err != nil {
		return nil, err
	}
	m.Version = before.Version + 1
	m.UpdatedAt = db.now().UTC().Truncate(time.Microsecond)
	if engram.Reinforces(action, before, m) {
		m.ReinforcedAt = m.UpdatedAt
	}
	next := *row
	db.fromMemory(&next, m)
	// Only the columns that changed: a feedback credit that moves reward
	// and confidence then leaves the search text alone, which on SQLite
	// would fire the full-text index's update trigger (a delete and an
	// insert of every term) and on PostgreSQL recompute the generated
	// tsvector, for the same words.
	res := tx.Model(&memoryRow{}).Where("seq = ? AND version = ?", row.Seq, before.Version).
		UpdateColumns(changedColumns(row, &next))
	if res.Error != nil {
		return nil, fmt.Errorf("store: update memory: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, errRetry
	}
	if err := db.checkQuota(tx, tenant, changeUsage(row, &next)); err != nil {
		return nil, err
	}
	if row.AgentID != next.AgentID || row.UserID != next.UserID || row.Valid != next.Valid || row.Archived != next.Archived {
		// The vector caches' partial reads read what was saved since:
		// a new owner or a death is news to them too (vectorCache).
		if err := tx.Exec(`UPDATE memory_vectors SET saved_at = ? WHERE memory_seq = ?`, db.now().UnixMilli(), row.Seq).Error; err != nil {
			return nil, fmt.Errorf("store: update memory: vector: %w", err)
		}
	}
	out := next.toMemory()
	return out, db.appendEvent(ctx, tenant, action, before, out)
}

// UpdateMemory implements engram.MemoryService.
func (db *DB) UpdateMemory(ctx context.Context, id string, u engram.MemoryUpdate) (*engram.Memory, error) {
	return db.mutate(ctx, "id = ?", id, u.ExpectVersion, engram.ActionUpdate, func(_ *gorm.DB, m *engram.Memory) (bool, error) {
		if !m.Valid {
			return false, engram.Errorf(engram.ECONFLICT, "memory is deleted; roll it back to revive it")
		}
		was := *m
		set(&m.AgentID, u.AgentID)
		set(&m.Category, u.Category)
		set(&m.Subcategory, u.Subcategory)
		set(&m.Type, u.Type)
		set(&m.Tags, u.Tags)
		set(&m.Content, u.Content)
		set(&m.Data, u.Data)
		set(&m.Summary, u.Summary)
		set(&m.Context, u.Context)
		set(&m.Importance, u.Importance)
		set(&m.Confidence, u.Confidence)
		if u.Emotion != nil {
			e := *u.Emotion
			m.Emotion = &e
		}
		set(&m.NeedsRevision, u.NeedsRevision)
		set(&m.Source, u.Source)
		set(&m.SecurityLevel, u.SecurityLevel)
		if m.Quarantined && u.Archived != nil && !*u.Archived && !u.Release {
			return false, engram.Errorf(engram.ECONFLICT, "memory is quarantined by the write gate; release it (POST /v1/memories/{id}/release)")
		}
		set(&m.Archived, u.Archived)
		if u.Release {
			if !m.Quarantined {
				return false, engram.Errorf(engram.ECONFLICT, "memory is not quarantined")
			}
			m.Quarantined, m.Archived = false, false
		}
		if u.Priority != nil && *u.Priority != m.Priority {
			m.Priority = *u.Priority
			m.Stability = db.rules.Scoring.Stability(m.Priority)
		}
		if u.ExpiresAt != nil {
			m.ExpiresAt = u.ExpiresAt
		}
		if u.ClearExpiry {
			m.ExpiresAt = nil
		}
		// Values the memory already holds are no change: no version.
		return !reflect.DeepEqual(was, *m), nil
	})
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// DeleteMemory implements engram.MemoryService. Deleting a deleted memory
// changes nothing and returns it.
func (db *DB) DeleteMemory(ctx context.Context, id string, expect *int64) (*engram.Memory, error) {
	return db.mutate(ctx, "id = ?", id, expect, engram.ActionTombstone, func(_ *gorm.DB, m *engram.Memory) (bool, error) {
		if !m.Valid {
			return false, nil
		}
		m.Valid = false
		return true, nil
	})
}

// FindMemoryEvents implements engram.MemoryService.
func (db *DB) FindMemoryEvents(ctx context.Context, id string) ([]*engram.MemoryEvent, error) {
	return db.FindMemoryEventsPage(ctx, id, 0, 0)
}

// FindMemoryEventsPage implements engram.MemoryService; limit 0 reads
// them all.
func (db *DB) FindMemoryEventsPage(ctx context.Context, id string, after int64, limit int) ([]*engram.MemoryEvent, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	g := db.r.WithContext(ctx)
	if _, err := findRow(g, tenant, "id = ?", id); err != nil {
		return nil, err
	}
	var rows []eventRow
	q := g.Where("tenant_id = ? AND memory_id = ? AND version > ?", tenant, id, after).Order("version")
	if limit > 0 {
		q = q.Limit(limit)
	}
	if err := q.Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find events: %w", err)
	}
	return withStates(g, tenant, id, rows)
}

// withStates decodes a memory's events, oldest first, and gives each
// delta event (a feedback credit) its full before and after: the state
// after the event before it, with the delta applied.
func withStates(g *gorm.DB, tenant, id string, rows []eventRow) ([]*engram.MemoryEvent, error) {
	out := make([]*engram.MemoryEvent, 0, len(rows))
	var state *engram.Memory
	for i := range rows {
		ev, err := rows[i].toEvent()
		if err != nil {
			return nil, err
		}
		if rows[i].Delta != nil {
			if state == nil {
				if state, err = stateAt(g, tenant, id, rows[i].Version-1); err != nil {
					return nil, err
				}
			}
			d, err := rows[i].delta()
			if err != nil {
				return nil, err
			}
			before, after := *state, *state
			d.Apply(&after, rows[i].Version)
			ev.Before, ev.After = &before, &after
		}
		state = nil
		if ev.After != nil {
			next := *ev.After
			state = &next
		}
		out = append(out, ev)
	}
	return out, nil
}

// stateAt rebuilds the memory as it was after version: the last full
// state recorded at or before it, with the deltas after that applied.
// EINVALID when no state is recorded.
func stateAt(g *gorm.DB, tenant, id string, version int64) (*engram.Memory, error) {
	var base []eventRow
	if err := g.Where("tenant_id = ? AND memory_id = ? AND version <= ? AND after IS NOT NULL", tenant, id, version).
		Order("version DESC").Limit(1).Find(&base).Error; err != nil {
		return nil, fmt.Errorf("store: find event: %w", err)
	}
	if len(base) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "no state recorded for version %d", version)
	}
	ev, err := base[0].toEvent()
	if err != nil {
		return nil, err
	}
	state := ev.After
	var deltas []eventRow
	if err := g.Where("tenant_id = ? AND memory_id = ? AND version > ? AND version <= ? AND delta IS NOT NULL",
		tenant, id, base[0].Version, version).Order("version").Find(&deltas).Error; err != nil {
		return nil, fmt.Errorf("store: find events: %w", err)
	}
	for i := range deltas {
		d, err := deltas[i].delta()
		if err != nil {
			return nil, err
		}
		d.Apply(state, deltas[i].Version)
	}
	return state, nil
}

// toEvent decodes the event, its actor included.
func (r *eventRow) toEvent() (*engram.MemoryEvent, error) {
	ev, err := r.states()
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(r.Actor), &ev.Actor)
	return ev, nil
}

// states decodes the event without its actor: what the change feed
// carries (Changes), which every feed consumer reads for every event.
func (r *eventRow) states() (*engram.MemoryEvent, error) {
	ev := &engram.MemoryEvent{ID: r.ID, MemoryID: r.MemoryID, Version: r.Version, Action: r.Action, CreatedAt: r.CreatedAt.UTC()}
	for _, s := range [...]struct {
		src *string
		dst **engram.Memory
	}{{r.Before, &ev.Before}, {r.After, &ev.After}} {
		if s.src != nil {
			var m engram.Memory
			if err := json.Unmarshal([]byte(*s.src), &m); err != nil {
				return nil, fmt.Errorf("store: decode event %d: %w", r.ID, err)
			}
			*s.dst = &m
		}
	}
	if r.Links != nil {
		if err := json.Unmarshal([]byte(*r.Links), &ev.Links); err != nil {
			return nil, fmt.Errorf("store: decode event %d: %w", r.ID, err)
		}
	}
	if r.Aliases != nil {
		if err := json.Unmarshal([]byte(*r.Aliases), &ev.Aliases); err != nil {
			return nil, fmt.Errorf("store: decode event %d: %w", r.ID, err)
		}
	}
	return ev, nil
}

// RollbackMemory implements engram.MemoryService: the memory takes again
// every stored field it had after version (content, metadata, feedback
// state, validity); identity, creation time, access statistics and the
// decay clock stay, and the clock restarts if the content changes.
func (db *DB) RollbackMemory(ctx context.Context, id string, version int64, expect *int64) (*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	return db.mutate(ctx, "id = ?", id, expect, engram.ActionRollback, func(tx *gorm.DB, m *engram.Memory) (bool, error) {
		if version < 1 || version >= m.Version {
			return false, engram.Errorf(engram.EINVALID, "version must be between 1 and %d", m.Version-1)
		}
		var rows []eventRow
		if err := tx.Where("tenant_id = ? AND memory_id = ? AND version = ?", tenant, id, version).
			Limit(1).Find(&rows).Error; err != nil {
			return false, fmt.Errorf("store: find event: %w", err)
		}
		if len(rows) == 0 || rows[0].After == nil && rows[0].Delta == nil {
			return false, engram.Errorf(engram.EINVALID, "no state recorded for version %d", version)
		}
		old, err := stateAt(tx, tenant, id, version)
		if err != nil {
			return false, err
		}
		old.ID, old.CreatedAt = m.ID, m.CreatedAt
		old.LastAccessedAt, old.AccessCount = m.LastAccessedAt, m.AccessCount
		old.ReinforcedAt = m.ReinforcedAt // restored content that differs reinforces (engram.Reinforces)
		*m = *old
		return true, nil
	})
}
