package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// Ensure DB implements the service interfaces.
var (
	_ engram.MemoryService = (*DB)(nil)
	_ engram.AuthService   = (*DB)(nil)
)

// memoryRow is the memories table. Root types carry no gorm tags.
type memoryRow struct {
	Seq               int64 `gorm:"primaryKey;autoIncrement"`
	ID                string
	TenantID          string
	AgentID           string
	Key               *string
	Category          string
	Subcategory       string
	Type              string
	Tags              string
	Content           string
	Data              *string
	Summary           string
	Context           string
	Learned           string
	Importance        float64
	Priority          string
	Confidence        float64
	Reward            float64
	UpCount           int64
	DownCount         int64
	NeedsRevision     bool
	SupersededBy      string
	Source            *string
	SecurityLevel     string
	Stability         float64
	TokenCount        int
	SummaryTokenCount int
	ContentHash       string
	Valid             bool
	Archived          bool
	ExpiresAt         *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	LastAccessedAt    *time.Time
	AccessCount       int64
	ReinforcedAt      *time.Time
	OccurredAt        *time.Time
	Version           int64
	SearchBody        string
	SearchMeta        string
}

func (memoryRow) TableName() string { return "memories" }

// memoryColumns are the memories columns a full update writes.
var memoryColumns = []string{"agent_id", "key", "category", "subcategory", "type", "tags", "content", "data",
	"summary", "context", "learned", "importance", "priority", "confidence", "reward", "up_count", "down_count", "needs_revision",
	"source", "security_level", "stability", "token_count", "summary_token_count", "content_hash", "valid",
	"archived", "expires_at", "updated_at", "reinforced_at", "occurred_at", "version", "superseded_by", "search_body", "search_meta"}

// memoryFields reads the memoryColumns of a row, in that order.
var memoryFields = []func(r *memoryRow) any{
	func(r *memoryRow) any { return r.AgentID }, func(r *memoryRow) any { return r.Key },
	func(r *memoryRow) any { return r.Category }, func(r *memoryRow) any { return r.Subcategory },
	func(r *memoryRow) any { return r.Type }, func(r *memoryRow) any { return r.Tags },
	func(r *memoryRow) any { return r.Content }, func(r *memoryRow) any { return r.Data },
	func(r *memoryRow) any { return r.Summary }, func(r *memoryRow) any { return r.Context },
	func(r *memoryRow) any { return r.Learned }, func(r *memoryRow) any { return r.Importance },
	func(r *memoryRow) any { return r.Priority }, func(r *memoryRow) any { return r.Confidence },
	func(r *memoryRow) any { return r.Reward }, func(r *memoryRow) any { return r.UpCount },
	func(r *memoryRow) any { return r.DownCount }, func(r *memoryRow) any { return r.NeedsRevision },
	func(r *memoryRow) any { return r.Source }, func(r *memoryRow) any { return r.SecurityLevel },
	func(r *memoryRow) any { return r.Stability }, func(r *memoryRow) any { return r.TokenCount },
	func(r *memoryRow) any { return r.SummaryTokenCount }, func(r *memoryRow) any { return r.ContentHash },
	func(r *memoryRow) any { return r.Valid }, func(r *memoryRow) any { return r.Archived },
	func(r *memoryRow) any { return r.ExpiresAt }, func(r *memoryRow) any { return r.UpdatedAt },
	func(r *memoryRow) any { return r.ReinforcedAt }, func(r *memoryRow) any { return r.OccurredAt },
	func(r *memoryRow) any { return r.Version }, func(r *memoryRow) any { return r.SupersededBy },
	func(r *memoryRow) any { return r.SearchBody }, func(r *memoryRow) any { return r.SearchMeta },
}

// changedColumns returns the memoryColumns whose values differ between
// the rows, with next's values. A read leaves the analysed search text
// out (readColumns), so search_body and search_meta count as changed
// when a column they are made of did.
func changedColumns(was, next *memoryRow) map[string]any {
	out := map[string]any{}
	for i, field := range memoryFields {
		a, b := field(was), field(next)
		if !sameValue(a, b) {
			out[memoryColumns[i]] = b
		}
	}
	searched := false
	for _, col := range searchSources {
		_, changed := out[col]
		searched = searched || changed
	}
	if !searched {
		delete(out, "search_body")
		delete(out, "search_meta")
	}
	return out
}

// searchSources are the columns fromMemory makes the search text of.
var searchSources = []string{"content", "summary", "tags", "key", "category", "subcategory", "type"}

// sameValue compares two values of one memoryRow field: nil pointers,
// pointed-to values and times by their instant.
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case *string:
		b := b.(*string)
		return a == b || a != nil && b != nil && *a == *b
	case *time.Time:
		b := b.(*time.Time)
		return a == b || a != nil && b != nil && a.Equal(*b)
	case time.Time:
		return a.Equal(b.(time.Time))
	default:
		return a == b
	}
}

// readColumns are the memories columns a read needs: all but the analyzed
// search text, which only the indexes use and which doubles the bytes.
var readColumns = append([]string{"seq", "id", "tenant_id", "created_at", "last_accessed_at", "access_count"},
	memoryColumns[:len(memoryColumns)-2]...)

// leanColumns leave out data and all but the start of source too: recall
// ranks and injects text, and a memory's free JSON can be large; the
// start of the source names the memory's origin (engram.Memory.Origin).
// findLean scans them by hand, in this order: gorm's reflective scan cost
// recall more than the query itself.
var leanColumns = strings.Join([]string{"seq", "id", "tenant_id", "agent_id", "key", "category", "subcategory", "type", "tags",
	"content", "summary", "context", "learned", "importance", "priority", "confidence", "reward", "up_count",
	"down_count", "needs_revision", "security_level", "stability", "token_count", "summary_token_count",
	"content_hash", "valid", "archived", "expires_at", "created_at", "updated_at", "last_accessed_at",
	"access_count", "reinforced_at", "occurred_at", "version", sourceStart}, ", ")

// sourceStart selects as much of a memory's source as names its origin.
var sourceStart = fmt.Sprintf("substr(CAST(source AS TEXT), 1, %d) AS source", engram.OriginSourceChars)

// findLean runs q (a memories query) for leanColumns.
func findLean(q *gorm.DB) ([]memoryRow, error) {
	rows, err := q.Model(&memoryRow{}).Select(leanColumns).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memoryRow
	for rows.Next() {
		var r memoryRow
		var expires, accessed, reinforced, occurred sql.NullTime
		if err := rows.Scan(&r.Seq, &r.ID, &r.TenantID, &r.AgentID, &r.Key, &r.Category, &r.Subcategory, &r.Type, &r.Tags,
			&r.Content, &r.Summary, &r.Context, &r.Learned, &r.Importance, &r.Priority, &r.Confidence, &r.Reward, &r.UpCount,
			&r.DownCount, &r.NeedsRevision, &r.SecurityLevel, &r.Stability, &r.TokenCount, &r.SummaryTokenCount,
			&r.ContentHash, &r.Valid, &r.Archived, &expires, &r.CreatedAt, &r.UpdatedAt, &accessed,
			&r.AccessCount, &reinforced, &occurred, &r.Version, &r.Source); err != nil {
			return nil, err
		}
		if expires.Valid {
			r.ExpiresAt = &expires.Time
		}
		if accessed.Valid {
			r.LastAccessedAt = &accessed.Time
		}
		if reinforced.Valid {
			r.ReinforcedAt = &reinforced.Time
		}
		if occurred.Valid {
			r.OccurredAt = &occurred.Time
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

type eventRow struct {
	ID        int64 `gorm:"primaryKey;autoIncrement"`
	TenantID  string
	MemoryID  string
	Version   int64
	Action    string
	Before    *string
	After     *string
	Delta     *string // a credit's engram.MemoryDelta; Before and After are NULL then
	Actor     string
	CreatedAt time.Time
	FeedSeq   *int64 // NULL until the transaction's end (see sequence)
}

func (eventRow) TableName() string { return "memory_events" }

func (r *memoryRow) toMemory() *engram.Memory {
	m := &engram.Memory{
		ID: r.ID, AgentID: r.AgentID, Category: r.Category, Subcategory: r.Subcategory, Type: r.Type,
		Content: r.Content, Summary: r.Summary, Context: r.Context, Learned: r.Learned, Importance: r.Importance, Priority: engram.Priority(r.Priority),
		Confidence: r.Confidence, Reward: r.Reward, UpCount: r.UpCount, DownCount: r.DownCount,
		NeedsRevision: r.NeedsRevision, SupersededBy: r.SupersededBy, SecurityLevel: r.SecurityLevel, Stability: r.Stability,
		TokenCount: r.TokenCount, SummaryTokenCount: r.SummaryTokenCount, ContentHash: r.ContentHash,
		Valid: r.Valid, Archived: r.Archived, ExpiresAt: utcPtr(r.ExpiresAt), CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(), LastAccessedAt: utcPtr(r.LastAccessedAt), AccessCount: r.AccessCount,
		OccurredAt: utcPtr(r.OccurredAt), Version: r.Version, Tags: []string{},
	}
	if r.ReinforcedAt != nil {
		m.ReinforcedAt = r.ReinforcedAt.UTC()
	} else {
		m.ReinforcedAt = r.UpdatedAt.UTC()
	}
	if r.Key != nil {
		m.Key = *r.Key
	}
	_ = json.Unmarshal([]byte(r.Tags), &m.Tags)
	if r.Data != nil {
		m.Data = json.RawMessage(*r.Data)
	}
	if r.Source != nil {
		m.Source = json.RawMessage(*r.Source)
	}
	return m
}

// fromMemory copies m's stored fields into r and derives the columns that
// follow from them: hash, token counts and the analyzed search terms.
func (db *DB) fromMemory(r *memoryRow, m *engram.Memory) {
	r.ID, r.AgentID, r.Category, r.Subcategory, r.Type = m.ID, m.AgentID, m.Category, m.Subcategory, m.Type
	r.Key = nil
	if m.Key != "" {
		k := m.Key
		r.Key = &k
	}
	tags, _ := json.Marshal(m.Tags)
	r.Tags = string(tags)
	r.Content, r.Summary, r.Context, r.Learned = m.Content, m.Summary, m.Context, m.Learned
	r.Data, r.Source = rawPtr(m.Data), rawPtr(m.Source)
	r.Importance, r.Priority, r.Confidence, r.Reward = m.Importance, string(m.Priority), m.Confidence, m.Reward
	r.UpCount, r.DownCount, r.NeedsRevision, r.SupersededBy = m.UpCount, m.DownCount, m.NeedsRevision, m.SupersededBy
	r.SecurityLevel, r.Stability = m.SecurityLevel, m.Stability
	r.Valid, r.Archived, r.ExpiresAt = m.Valid, m.Archived, utcPtr(m.ExpiresAt)
	r.CreatedAt, r.UpdatedAt, r.LastAccessedAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), utcPtr(m.LastAccessedAt)
	r.AccessCount, r.Version, r.OccurredAt = m.AccessCount, m.Version, utcPtr(m.OccurredAt)
	reinforced := m.ReinforcedAt.UTC()
	r.ReinforcedAt = &reinforced

	m.ContentHash = contentHash(m.Content)
	m.TokenCount = db.tokens.Count(m.Content)
	m.SummaryTokenCount = 0
	if m.Summary != "" {
		m.SummaryTokenCount = db.tokens.Count(m.Summary)
	}
	r.ContentHash, r.TokenCount, r.SummaryTokenCount = m.ContentHash, m.TokenCount, m.SummaryTokenCount
	r.SearchBody = analysis.Join(m.Content + "\n" + m.Summary)
	r.SearchMeta = analysis.Join(strings.Join(m.Tags, " ") + " " + m.Key + " " + m.Category + " " + m.Subcategory + " " + m.Type)
}

func rawPtr(b json.RawMessage) *string {
	if len(b) == 0 {
		return nil
	}
	s := string(b)
	return &s
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// contentHash identifies content for the write guard: the text with outer
// white space trimmed and inner runs of white space folded to one space.
func contentHash(content string) string {
	sum := sha256.Sum256([]byte(strings.Join(strings.Fields(content), " ")))
	return hex.EncodeToString(sum[:])
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns prefix_ plus 96 random bits: unguessable, so an id tells
// nothing about other tenants.
func newID(prefix string) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + "_" + idEncoding.EncodeToString(b)
}

// tenantOf returns the tenant in ctx; every query is scoped by it.
func tenantOf(ctx context.Context) (string, error) {
	t := engram.TenantFromContext(ctx)
	if t == "" {
		return "", engram.Errorf(engram.EUNAUTHORIZED, "no tenant")
	}
	return t, nil
}

// FindMemoryByID implements engram.MemoryService.
func (db *DB) FindMemoryByID(ctx context.Context, id string) (*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	row, err := findRow(db.r.WithContext(ctx), tenant, "id = ?", id)
	if err != nil {
		return nil, err
	}
	return row.toMemory(), nil
}

func findRow(g *gorm.DB, tenant, where string, args ...any) (*memoryRow, error) {
	var rows []memoryRow
	if err := g.Select(readColumns).Where("tenant_id = ?", tenant).Where(where, args...).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: find memory: %w", err)
	}
	if len(rows) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "memory not found")
	}
	return &rows[0], nil
}

// CreateMemory implements engram.MemoryService. Defaults fill unset
// fields; identical content (see contentHash) in the same tenant and
// category returns the existing memory with Deduplicated set.
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
		db.rules.ApplyDefaults(m)
		if err := db.rules.Validate(m); err != nil {
			if len(ms) > 1 {
				var e *engram.Error
				if errors.As(err, &e) {
					return nil, engram.Errorf(e.Code, "memories[%d]: %s", i, e.Message)
				}
			}
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		results := make([]*engram.CreateResult, len(ms))
		err = db.writeTx(ctx, tenant, func(ctx context.Context, tx *gorm.DB) error {
			return db.insertBatch(ctx, tx, tenant, ms, results)
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
				if _, ferr := findRow(db.r.WithContext(ctx), tenant, "key = ?", m.Key); ferr == nil {
					return nil, engram.Errorf(engram.ECONFLICT, "key %q already exists; PUT /v1/keys to replace it", m.Key)
				}
			}
		}
		return nil, engram.Errorf(engram.ECONFLICT, "a memory in this batch conflicts with a concurrent write; retry")
	}
}

// dedupeKey is what makes two memories duplicates (the memories_dedupe
// index): agent, category and content hash, for memories without a key.
type dedupeKey struct{ agent, category, hash string }

// findDuplicates returns the live memories of the tenant that the
// memories without a key in ms duplicate, read in one statement per agent
// and category (and 500 hashes) rather than one per memory; each uses the
// memories_dedupe index.
func (db *DB) findDuplicates(ctx context.Context, tx *gorm.DB, tenant string, ms []*engram.Memory) (map[dedupeKey]*engram.Memory, error) {
	type group struct{ agent, category string }
	hashes := map[group][]string{}
	var groups []group
	seen := map[dedupeKey]bool{}
	for _, m := range ms {
		if m.Key == "" {
			g, k := group{m.AgentID, m.Category}, dedupeKey{m.AgentID, m.Category, contentHash(m.Content)}
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
			if err := tx.Select(readColumns).Where("tenant_id = ? AND agent_id = ? AND category = ? AND content_hash IN ? AND key IS NULL AND valid AND NOT archived",
				tenant, g.agent, g.category, hs[i:min(i+500, len(hs))]).Find(&rows).Error; err != nil {
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
				dups[dedupeKey{row.AgentID, row.Category, row.ContentHash}] = dup
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
	dups, err := db.findDuplicates(ctx, tx, tenant, ms)
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
			k = dedupeKey{m.AgentID, m.Category, contentHash(m.Content)}
			if dup := dups[k]; dup != nil {
				results[i] = &engram.CreateResult{Memory: dup, Deduplicated: true}
				continue
			}
			if r, ok := first[k]; ok {
				at[i] = r
				continue
			}
		}
		m.ID, m.Valid, m.Archived, m.Version = newID("mem"), true, false, 1
		m.Reward, m.UpCount, m.DownCount, m.NeedsRevision, m.SupersededBy = 0, 0, 0, false, ""
		m.Stability = db.rules.Scoring.Stability(m.Priority)
		m.CreatedAt, m.UpdatedAt, m.LastAccessedAt, m.AccessCount, m.ReinforcedAt = now, now, nil, 0, now
		row := memoryRow{TenantID: tenant}
		db.fromMemory(&row, m)
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
		set(&m.NeedsRevision, u.NeedsRevision)
		set(&m.Source, u.Source)
		set(&m.SecurityLevel, u.SecurityLevel)
		set(&m.Archived, u.Archived)
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

func (r *eventRow) toEvent() (*engram.MemoryEvent, error) {
	ev := &engram.MemoryEvent{ID: r.ID, MemoryID: r.MemoryID, Version: r.Version, Action: r.Action, CreatedAt: r.CreatedAt.UTC()}
	for src, dst := range map[*string]**engram.Memory{r.Before: &ev.Before, r.After: &ev.After} {
		if src != nil {
			var m engram.Memory
			if err := json.Unmarshal([]byte(*src), &m); err != nil {
				return nil, fmt.Errorf("store: decode event %d: %w", r.ID, err)
			}
			*dst = &m
		}
	}
	_ = json.Unmarshal([]byte(r.Actor), &ev.Actor)
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

// CountMemories implements engram.MemoryService.
func (db *DB) CountMemories(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Valid    bool
		Archived bool
		Expired  bool
		N        int64
	}
	if err := db.r.WithContext(ctx).Raw(`SELECT valid, archived, (expires_at IS NOT NULL AND expires_at <= ?) AS expired,
		COUNT(*) AS n FROM memories GROUP BY 1, 2, 3`, db.now().UTC()).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: count memories: %w", err)
	}
	out := map[string]int64{"active": 0, "archived": 0, "tombstoned": 0, "expired": 0}
	for _, r := range rows {
		switch {
		case !r.Valid:
			out["tombstoned"] += r.N
		case r.Archived:
			out["archived"] += r.N
		case r.Expired:
			out["expired"] += r.N
		default:
			out["active"] += r.N
		}
	}
	return out, nil
}
