package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// CreateMemory implements engram.MemoryService. Defaults fill unset
// fields; identical content (see contentHash) of the same user, agent,
// category and security level returns the existing memory with
// Deduplicated set.
func (db *DB) CreateMemory(ctx context.Context, m *engram.Memory) (*engram.CreateResult, error) {
	res, err := db.CreateMemories(ctx, []*engram.Memory{m})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// CreateMemories implements engram.MemoryService: every memory is
// validated first, then all are stored in one transaction, so a batch is
// written whole or not at all. Duplicates inside the batch collapse onto
// the first.
func (db *DB) CreateMemories(ctx context.Context, ms []*engram.Memory) ([]*engram.CreateResult, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		if m.UserID == "" {
			m.UserID = engram.UserFromContext(ctx)
		}
		db.rules.ApplyDefaults(m)
		err := db.rules.Validate(m)
		if err == nil {
			err = engram.CheckUserID(m.UserID)
		}
		if err != nil {
			if len(ms) > 1 {
				var e *engram.Error
				if errors.As(err, &e) {
					return nil, engram.Errorf(e.Code, "memories[%d]: %s", i, e.Message)
				}
			}
			return nil, err
		}
	}
	ds := db.deriveAll(ms)
	for attempt := 0; ; attempt++ {
		results := make([]*engram.CreateResult, len(ms))
		err = db.writeTx(ctx, tenant, func(ctx context.Context, tx *gorm.DB) error {
			return db.insertDerived(ctx, tx, tenant, ms, ds, results)
		})
		if err == nil {
			return results, nil
		}
		if db.dialect.isTransient(err) && attempt < maxAttempts {
			if err := backoff(ctx, attempt); err != nil {
				return nil, err
			}
			continue
		}
		if !db.dialect.isUniqueViolation(err) {
			return nil, err
		}
		// A concurrent writer (PostgreSQL) stored the same content first,
		// or a key is taken: retry, which finds and returns the duplicate.
		if db.dialect.uniqueRule(err) == ruleDedupe && attempt < 3 {
			continue
		}
		for _, m := range ms {
			if m.Key != "" {
				if _, ferr := findRow(db.r.WithContext(ctx), tenant, "key = ? AND user_id = ?", m.Key, m.UserID); ferr == nil {
					return nil, engram.Errorf(engram.ECONFLICT, "key %q already exists; PUT /v1/keys to replace it", m.Key)
				}
			}
		}
		return nil, engram.Errorf(engram.ECONFLICT, "a memory in this batch conflicts with a concurrent write; retry")
	}
}

// deriveAll derives the columns of each memory of ms (hash, token counts,
// full-text terms) before the batch's transaction, so the one writer is
// not held while they are computed; a large batch is split over the
// cores.
func (db *DB) deriveAll(ms []*engram.Memory) []derived {
	ds := make([]derived, len(ms))
	workers := min(runtime.GOMAXPROCS(0), len(ms)/deriveChunk)
	if workers < 2 {
		for i, m := range ms {
			ds[i] = db.derive(m)
		}
		return ds
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range workers {
		wg.Go(func() {
			for {
				start := int(next.Add(deriveChunk)) - deriveChunk
				if start >= len(ms) {
					return
				}
				for i := start; i < min(start+deriveChunk, len(ms)); i++ {
					ds[i] = db.derive(ms[i])
				}
			}
		})
	}
	wg.Wait()
	return ds
}

// deriveChunk is how many memories one worker of deriveAll takes at a
// time; a batch of fewer than two chunks is derived in the caller.
const deriveChunk = 32

// dedupeKey is what makes two memories duplicates (the memories_dedupe
// index): user, agent, category, security level and content hash, for
// memories without a key. The level is part of it so that a write never
// meets a memory at another level: one above the writer's clearance
// would tell it that its text is stored there.
type dedupeKey struct{ user, agent, category, level, hash string }

// findDuplicates returns the live memories of the tenant that the
// memories without a key in ms duplicate, read in one statement per user,
// agent, category and level (and 500 hashes) rather than one per memory;
// each uses the memories_dedupe index.
func (db *DB) findDuplicates(ctx context.Context, tx *gorm.DB, tenant string, ms []*engram.Memory, ds []derived) (map[dedupeKey]*engram.Memory, error) {
	type group struct{ user, agent, category, level string }
	hashes := map[group][]string{}
	var groups []group
	seen := map[dedupeKey]bool{}
	for i, m := range ms {
		if m.Key == "" {
			g, k := group{m.UserID, m.AgentID, m.Category, m.SecurityLevel}, dedupeKey{m.UserID, m.AgentID, m.Category, m.SecurityLevel, ds[i].hash}
			if seen[k] {
				continue
			}
			seen[k] = true
			if hashes[g] == nil {
				groups = append(groups, g)
			}
			hashes[g] = append(hashes[g], k.hash)
		}
	}
	dups := map[dedupeKey]*engram.Memory{}
	for _, g := range groups {
		hs := hashes[g]
		for i := 0; i < len(hs); i += 500 {
			var rows []memoryRow
			in, list := inList(tx, "content_hash", hs[i:min(i+500, len(hs))])
			if err := tx.Select(readColumns).Where("tenant_id = ? AND user_id = ? AND agent_id = ? AND category = ? AND security_level = ? AND "+in+" AND key IS NULL AND valid AND NOT archived",
				tenant, g.user, g.agent, g.category, g.level, list).Find(&rows).Error; err != nil {
				return nil, fmt.Errorf("store: find duplicates: %w", err)
			}
			for j := range rows {
				row := &rows[j]
				dup := row.toMemory()
				if dup.Expired(db.now()) {
					// An expired copy is dead to every reader: retire it (a
					// tombstone event records why) so that the new write is
					// stored, not lost.
					if _, err := db.mutateTx(ctx, tx, tenant, "seq = ?", row.Seq, nil, engram.ActionTombstone,
						func(_ *gorm.DB, m *engram.Memory) (bool, error) { m.Valid = false; return true, nil }); err != nil {
						return nil, err
					}
					continue
				}
				dups[dedupeKey{row.UserID, row.AgentID, row.Category, row.SecurityLevel, row.ContentHash}] = dup
			}
		}
	}
	return dups, nil
}

// insertBatch stores the new, validated memories of ms with their create
// events and fills results; a memory that duplicates a stored one, or an
// earlier one of the batch, returns that one with Deduplicated set. The
// rows go in multi-row statements. The agent is part of the identity:
// returning another agent's private memory for the same words would leak
// it.
func (db *DB) insertBatch(ctx context.Context, tx *gorm.DB, tenant string, ms []*engram.Memory, results []*engram.CreateResult) error {
	return db.insertDerived(ctx, tx, tenant, ms, db.deriveAll(ms), results)
}

// insertDerived is insertBatch with the columns of ms derived already
// (ds[i] of ms[i]; see deriveAll).
func (db *DB) insertDerived(ctx context.Context, tx *gorm.DB, tenant string, ms []*engram.Memory, ds []derived, results []*engram.CreateResult) error {
	dups, err := db.findDuplicates(ctx, tx, tenant, ms, ds)
	if err != nil {
		return err
	}
	now := db.now().UTC().Truncate(time.Microsecond)
	var rows []memoryRow
	at := make([]int, len(ms)) // the row of each memory, or -1 for a stored duplicate
	first := map[dedupeKey]int{}
	for i, m := range ms {
		at[i] = -1
		var k dedupeKey
		if m.Key == "" {
			k = dedupeKey{m.UserID, m.AgentID, m.Category, m.SecurityLevel, ds[i].hash}
			if dup := dups[k]; dup != nil {
				results[i] = &engram.CreateResult{Memory: dup, Deduplicated: true}
				continue
			}
			if r, ok := first[k]; ok {
				at[i] = r
				continue
			}
		}
		m.ID, m.Valid, m.Archived, m.Version = newMemoryID(now), true, m.Quarantined, 1
		m.Reward, m.UpCount, m.DownCount, m.NeedsRevision, m.SupersededBy = 0, 0, 0, false, ""
		m.Stability = db.rules.Scoring.Stability(m.Priority)
		m.CreatedAt, m.UpdatedAt, m.LastAccessedAt, m.AccessCount, m.ReinforcedAt = now, now, nil, 0, now
		row := memoryRow{TenantID: tenant}
		fromFields(&row, m)
		db.fromDerived(&row, m, ds[i])
		if m.Key == "" {
			first[k] = len(rows)
		}
		at[i] = len(rows)
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil
	}
	if err := tx.CreateInBatches(rows, insertBatchRows).Error; err != nil {
		return fmt.Errorf("store: insert memory: %w", err)
	}
	if err := db.checkQuota(tx, tenant, rowsUsage(rows)); err != nil {
		return err
	}
	created := make([]*engram.Memory, len(rows))
	for j := range rows {
		created[j] = rows[j].toMemory()
		if err := db.appendEvent(ctx, tenant, engram.ActionCreate, nil, created[j]); err != nil {
			return err
		}
	}
	done := make([]bool, len(rows))
	for i, r := range at {
		if r < 0 {
			continue
		}
		results[i] = &engram.CreateResult{Memory: created[r], Deduplicated: done[r]}
		done[r] = true
	}
	return nil
}

// insertBatchRows is how many memories one INSERT writes: 38 columns each,
// well within the bound parameters of either engine.
const insertBatchRows = 100
