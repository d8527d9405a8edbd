package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
	UserID            string
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
	Emotion           float64
	Quarantined       bool
	Version           int64
	SearchBody        string
	SearchMeta        string
}

func (memoryRow) TableName() string { return "memories" }

// memoryColumns are the memories columns a full update writes.
var memoryColumns = []string{"agent_id", "key", "category", "subcategory", "type", "tags", "content", "data",
	"summary", "context", "learned", "importance", "priority", "confidence", "reward", "up_count", "down_count", "needs_revision",
	"source", "security_level", "stability", "token_count", "summary_token_count", "content_hash", "valid",
	"archived", "expires_at", "updated_at", "reinforced_at", "occurred_at", "version", "superseded_by", "emotion", "quarantined", "search_body", "search_meta"}

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
	func(r *memoryRow) any { return r.Emotion }, func(r *memoryRow) any { return r.Quarantined },
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
var readColumns = append([]string{"seq", "id", "tenant_id", "user_id", "created_at", "last_accessed_at", "access_count"},
	memoryColumns[:len(memoryColumns)-2]...)

// leanColumns leave out data and all but the start of source too: recall
// ranks and injects text, and a memory's free JSON can be large; the
// start of the source names the memory's origin (engram.Memory.Origin).
// findLean scans them by hand, in this order: gorm's reflective scan cost
// recall more than the query itself.
var leanColumns = strings.Join([]string{"seq", "id", "tenant_id", "agent_id", "user_id", "key", "category", "subcategory", "type", "tags",
	"content", "summary", "context", "learned", "importance", "priority", "confidence", "reward", "up_count",
	"down_count", "needs_revision", "security_level", "stability", "token_count", "summary_token_count",
	"content_hash", "valid", "archived", "expires_at", "created_at", "updated_at", "last_accessed_at",
	"access_count", "reinforced_at", "occurred_at", "version", "emotion", "quarantined", sourceStart}, ", ")

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
		if err := rows.Scan(&r.Seq, &r.ID, &r.TenantID, &r.AgentID, &r.UserID, &r.Key, &r.Category, &r.Subcategory, &r.Type, &r.Tags,
			&r.Content, &r.Summary, &r.Context, &r.Learned, &r.Importance, &r.Priority, &r.Confidence, &r.Reward, &r.UpCount,
			&r.DownCount, &r.NeedsRevision, &r.SecurityLevel, &r.Stability, &r.TokenCount, &r.SummaryTokenCount,
			&r.ContentHash, &r.Valid, &r.Archived, &expires, &r.CreatedAt, &r.UpdatedAt, &accessed,
			&r.AccessCount, &reinforced, &occurred, &r.Version, &r.Emotion, &r.Quarantined, &r.Source); err != nil {
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

func (r *memoryRow) toMemory() *engram.Memory {
	m := &engram.Memory{
		ID: r.ID, AgentID: r.AgentID, UserID: r.UserID, Category: r.Category, Subcategory: r.Subcategory, Type: r.Type,
		Content: r.Content, Summary: r.Summary, Context: r.Context, Learned: r.Learned, Importance: r.Importance, Priority: engram.Priority(r.Priority),
		Confidence: r.Confidence, Reward: r.Reward, UpCount: r.UpCount, DownCount: r.DownCount,
		NeedsRevision: r.NeedsRevision, SupersededBy: r.SupersededBy, SecurityLevel: r.SecurityLevel, Stability: r.Stability,
		TokenCount: r.TokenCount, SummaryTokenCount: r.SummaryTokenCount, ContentHash: r.ContentHash,
		Valid: r.Valid, Archived: r.Archived, ExpiresAt: utcPtr(r.ExpiresAt), CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(), LastAccessedAt: utcPtr(r.LastAccessedAt), AccessCount: r.AccessCount,
		OccurredAt: utcPtr(r.OccurredAt), Version: r.Version, Tags: []string{}, Quarantined: r.Quarantined,
	}
	emotion := r.Emotion
	m.Emotion = &emotion
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
	fromFields(r, m)
	db.fromDerived(r, m, db.derive(m))
}

// fromFields copies m's stored fields onto r (not what derive computes).
func fromFields(r *memoryRow, m *engram.Memory) {
	r.ID, r.AgentID, r.Category, r.Subcategory, r.Type = m.ID, m.AgentID, m.Category, m.Subcategory, m.Type
	r.UserID = m.UserID
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
	if m.Emotion == nil {
		e := engram.EstimateEmotion(m.Content)
		m.Emotion = &e
	}
	r.Emotion, r.Quarantined = *m.Emotion, m.Quarantined
}

// derived is what a row computes from a memory's text: the write guard's
// hash, the token counts and the full-text columns. It is most of a
// write's CPU, and needs no transaction: a batch derives it before its
// transaction, on every core.
type derived struct {
	hash                  string
	tokens, summaryTokens int
	body, meta            string
}

func (db *DB) derive(m *engram.Memory) derived {
	d := derived{hash: contentHash(m.Content), tokens: db.tokens.Count(m.Content)}
	if m.Summary != "" {
		d.summaryTokens = db.tokens.Count(m.Summary)
	}
	d.body = analysis.Join(m.Content + "\n" + m.Summary)
	d.meta = analysis.Join(strings.Join(m.Tags, " ") + " " + m.Key + " " + m.Category + " " + m.Subcategory + " " + m.Type)
	return d
}

// fromDerived sets what d holds on m and r.
func (db *DB) fromDerived(r *memoryRow, m *engram.Memory, d derived) {
	m.ContentHash, m.TokenCount, m.SummaryTokenCount = d.hash, d.tokens, d.summaryTokens
	r.ContentHash, r.TokenCount, r.SummaryTokenCount = d.hash, d.tokens, d.summaryTokens
	r.SearchBody, r.SearchMeta = d.body, d.meta
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

// newMemoryID returns mem_ plus the creation time (seconds, 32 bits,
// big-endian) and 96 random bits: as unguessable as newID, and telling
// only when the memory was created, which its holder reads in it anyway.
// Memories created in the same few seconds share the id's first
// characters, so the indexes keyed by memory id (memories.id and
// memory_events' (memory_id, version)) take a batch's rows in a few
// neighbouring pages rather than one page each anywhere in the index: at
// millions of memories those pages are no longer in the page cache, and
// reading and rewriting one per row was a large part of a batch's cost.
func newMemoryID(now time.Time) string {
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b, uint32(now.Unix()))
	if _, err := rand.Read(b[4:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return "mem_" + idEncoding.EncodeToString(b)
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
