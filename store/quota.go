package store

import (
	"context"
	"fmt"
	"sync/atomic"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// Quotas bound what one tenant may hold; 0 leaves a quota unlimited. A
// tenant's own quotas (the admin API, engram.TenantQuotas) override these.
//
// What a tenant holds is its tenant_usage row, which triggers keep in
// the transaction of every write (migration 0017): live (not deleted)
// memories, archived and expired ones included until they are deleted;
// the bytes of their content; and its sessions, expired ones included
// until the cleaner deletes them. A write that would take the tenant
// past a quota is refused with EQUOTA inside its own transaction, so it
// writes nothing; a write that adds nothing (a delete, a vote, a smaller
// replacement) is never refused, even past a quota that was lowered.
//
// On PostgreSQL the trigger's UPDATE locks the tenant's usage row from
// the write that moves it until commit, so writers of one tenant that
// add or remove memories (or change their content) queue there, as they
// already queue on the tenant's feed row at commit; votes and access
// counts never touch it. A transaction that writes several memories may
// take the usage row before another memory's row lock, so two such
// transactions can deadlock; PostgreSQL breaks it and the store's
// retries of transient errors run the loser again.
type Quotas struct {
	Memories int64
	Bytes    int64
	Sessions int64
}

// Quota names, as QuotaRefusals and the metrics label them.
const (
	QuotaMemories = "memories"
	QuotaBytes    = "bytes"
	QuotaSessions = "sessions"
)

// usage is a tenant_usage row, or what one write added to it.
type usage struct {
	Memories int64
	Bytes    int64
	Sessions int64
}

// tenantLimits is a tenant's usage with its quota overrides (migration
// 0019: NULL keeps the configured quota).
type tenantLimits struct {
	Memories    int64
	Bytes       int64
	Sessions    int64
	MaxMemories *int64
	MaxBytes    *int64
	MaxSessions *int64
}

const tenantLimitsSQL = `SELECT u.memories, u.bytes, u.sessions, t.max_memories, t.max_bytes, t.max_sessions
	FROM tenant_usage u JOIN tenants t ON t.id = u.tenant_id WHERE u.tenant_id = ?`

// quotasOf is the configured quotas with the tenant's overrides.
func (db *DB) quotasOf(l tenantLimits) Quotas {
	q := db.quotas
	for _, o := range []struct {
		v   *int64
		dst *int64
	}{{l.MaxMemories, &q.Memories}, {l.MaxBytes, &q.Bytes}, {l.MaxSessions, &q.Sessions}} {
		if o.v != nil {
			*o.dst = *o.v
		}
	}
	return q
}

// readLimits reads the tenant's usage and quota overrides, by primary
// key, once per write that adds to a quota (the overrides are per tenant,
// so a write can no longer skip the read when no quota is configured).
func (db *DB) readLimits(g *gorm.DB, tenant string) (tenantLimits, error) {
	var l tenantLimits
	if err := g.Raw(tenantLimitsSQL, tenant).Find(&l).Error; err != nil {
		return l, fmt.Errorf("store: read tenant usage: %w", err)
	}
	return l, nil
}

// quotaRefusals counts the writes each quota refused in this process.
type quotaRefusals struct {
	memories, bytes, sessions atomic.Int64
}

// QuotaRefusals returns, by quota name, how many writes a quota refused
// since Open, whatever door they came through.
func (db *DB) QuotaRefusals() map[string]int64 {
	return map[string]int64{QuotaMemories: db.refusals.memories.Load(), QuotaBytes: db.refusals.bytes.Load(),
		QuotaSessions: db.refusals.sessions.Load()}
}

// rowsUsage is what inserting rows adds to their tenant's usage.
func rowsUsage(rows []memoryRow) usage {
	u := usage{}
	for i := range rows {
		if rows[i].Valid {
			u.Memories++
			u.Bytes += int64(len(rows[i].Content))
		}
	}
	return u
}

// changeUsage is what changing a memory row from was to next adds to its
// tenant's usage (negative parts are ignored by checkQuota).
func changeUsage(was, next *memoryRow) usage {
	live := func(r *memoryRow) (int64, int64) {
		if !r.Valid {
			return 0, 0
		}
		return 1, int64(len(r.Content))
	}
	m0, b0 := live(was)
	m1, b1 := live(next)
	return usage{Memories: m1 - m0, Bytes: b1 - b0}
}

// checkQuota runs in a write transaction after the write's rows are in:
// when the write added to a quota that is set, it reads the tenant's
// usage (which the triggers already moved, and which on PostgreSQL this
// transaction now holds locked until commit) and refuses with EQUOTA,
// naming the quota and its limit, if the tenant is past it. The caller
// returns the error, which rolls the whole write back.
func (db *DB) checkQuota(tx *gorm.DB, tenant string, added usage) error {
	if added.Memories <= 0 && added.Bytes <= 0 && added.Sessions <= 0 {
		return nil
	}
	l, err := db.readLimits(tx, tenant)
	if err != nil {
		return err
	}
	return db.overQuota(db.quotasOf(l), added, usage{Memories: l.Memories, Bytes: l.Bytes, Sessions: l.Sessions})
}

// overQuota refuses, with EQUOTA naming the quota and its limit, a write
// that added to a quota the tenant's usage u is now past, and counts the
// refusal.
func (db *DB) overQuota(q Quotas, added, u usage) error {
	switch {
	case added.Memories > 0 && q.Memories > 0 && u.Memories > q.Memories:
		db.refusals.memories.Add(1)
		return engram.Errorf(engram.EQUOTA, "memories quota reached: the tenant may hold at most %d memories (quotas.max_memories); delete some first", q.Memories)
	case added.Bytes > 0 && q.Bytes > 0 && u.Bytes > q.Bytes:
		db.refusals.bytes.Add(1)
		return engram.Errorf(engram.EQUOTA, "bytes quota reached: the tenant's memories may hold at most %d bytes of content (quotas.max_bytes); delete some first", q.Bytes)
	case added.Sessions > 0 && q.Sessions > 0 && u.Sessions > q.Sessions:
		db.refusals.sessions.Add(1)
		return engram.Errorf(engram.EQUOTA, "sessions quota reached: the tenant may hold at most %d sessions (quotas.max_sessions); expired ones count until they are cleaned up", q.Sessions)
	}
	return nil
}

// CheckQuota reports, without writing or locking, whether the tenant in
// ctx has room for memories more memories holding bytes more bytes of
// content: EQUOTA as a write past the quota would get. A caller that
// writes in two transactions (a session's events, then their episodes)
// asks first, so that a refusal usually writes nothing; the write itself
// is still checked, so a race between the two never overshoots a quota.
func (db *DB) CheckQuota(ctx context.Context, memories, bytes int64) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	if memories <= 0 && bytes <= 0 {
		return nil
	}
	l, err := db.readLimits(db.r.WithContext(ctx), tenant)
	if err != nil {
		return err
	}
	return db.overQuota(db.quotasOf(l), usage{Memories: memories, Bytes: bytes},
		usage{Memories: l.Memories + memories, Bytes: l.Bytes + bytes})
}
