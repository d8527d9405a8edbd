package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/analysis"
)

// FindMemories implements engram.MemoryService. Pages run newest first.
// Query keeps memories whose content, summary, tags or key contain every
// analyzed term of the query; a query with no terms (only punctuation or
// emoji) matches nothing. Expired memories count as invalid.
func (db *DB) FindMemories(ctx context.Context, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	limit, err := db.pageLimit(f.Limit)
	if err != nil {
		return nil, err
	}
	fingerprint := filterFingerprint(tenant, f)
	after, err := db.decodeCursor(f.Cursor, fingerprint)
	if err != nil {
		return nil, err
	}
	q := db.r.WithContext(ctx).Model(&memoryRow{}).Select(readColumns).Where("memories.tenant_id = ?", tenant)
	if after > 0 {
		q = q.Where("memories.seq < ?", after)
	}
	if !f.IncludeInvalid {
		q = q.Where("memories.valid AND (memories.expires_at IS NULL OR memories.expires_at > ?)", db.now().UTC())
	}
	if !f.IncludeArchived && (f.Quarantined == nil || !*f.Quarantined) {
		q = q.Where("NOT memories.archived")
	}
	if f.Quarantined != nil {
		q = q.Where("memories.quarantined = ?", *f.Quarantined)
	}
	if f.Category != nil {
		q = q.Where("memories.category = ?", *f.Category)
	}
	if f.AgentID != nil {
		q = q.Where("memories.agent_id = ?", *f.AgentID)
	}
	if f.UserID != nil {
		q = q.Where("memories.user_id = ?", *f.UserID)
	}
	if f.NeedsRevision != nil {
		q = q.Where("memories.needs_revision = ?", *f.NeedsRevision)
	}
	if f.KeyPrefix != nil { // substr, not LIKE: % and _ in a key are not wildcards
		// substr counts characters in both engines, not bytes.
		q = q.Where("memories.key IS NOT NULL AND substr(memories.key, 1, ?) = ?", utf8.RuneCountInString(*f.KeyPrefix), *f.KeyPrefix)
	}
	if f.Tag != nil {
		clause, arg := db.dialect.hasTag(*f.Tag)
		q = q.Where(clause, arg)
	}
	if f.Query != nil {
		terms := analysis.UniqueTerms(*f.Query)
		if len(terms) > maxQueryTerms {
			return nil, engram.Errorf(engram.EINVALID, "q has more than %d words", maxQueryTerms)
		}
		if len(terms) == 0 {
			return &engram.MemoryPage{Items: []*engram.Memory{}}, nil
		}
		clause, arg := db.dialect.matchAll(terms)
		q = q.Where(clause, arg)
	}
	var rows []memoryRow
	if err := q.Order("memories.seq DESC").Limit(limit + 1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: list memories: %w", err)
	}
	items, next := seqPage(db, rows, limit, fingerprint, func(r *memoryRow) int64 { return r.Seq }, (*memoryRow).toMemory)
	return &engram.MemoryPage{Items: items, NextCursor: next}, nil
}

// seqPage turns the limit+1 rows of a list read newest seq first into one
// page's items and the cursor of the page after it ("" on the last page).
func seqPage[R, T any](db *DB, rows []R, limit int, fingerprint string, seq func(*R) int64, item func(*R) T) ([]T, string) {
	items := make([]T, 0, min(len(rows), limit))
	for i := range rows {
		if i == limit {
			return items, db.encodeCursor(seq(&rows[i-1]), fingerprint)
		}
		items = append(items, item(&rows[i]))
	}
	return items, ""
}

// pageLimit is the size of a page of a list asked for limit:
// limits.default_list_limit for 0, else EINVALID unless in [1,
// limits.max_list_limit].
func (db *DB) pageLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return db.rules.Limits.DefaultListLimit, nil
	case limit < 0 || limit > db.rules.Limits.MaxListLimit:
		return 0, engram.Errorf(engram.EINVALID, "limit must be between 1 and %d", db.rules.Limits.MaxListLimit)
	}
	return limit, nil
}

type cursor struct {
	After int64 `json:"a"`
}

// filterFingerprint binds a cursor to the tenant and filter it was made
// for, so that it cannot be replayed against other data.
func filterFingerprint(tenant string, f engram.MemoryFilter) string {
	str := func(p *string) string {
		if p == nil {
			return "\x00"
		}
		return *p
	}
	b := func(p *bool) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return strings.Join([]string{tenant, str(f.Category), str(f.Tag), str(f.Query), b(f.NeedsRevision), b(f.Quarantined),
		str(f.KeyPrefix), str(f.AgentID), str(f.UserID), fmt.Sprint(f.IncludeInvalid, f.IncludeArchived)}, "\x1f")
}

// encodeCursor returns base64url(payload) "." base64url(HMAC-SHA256).
func (db *DB) encodeCursor(after int64, fingerprint string) string {
	payload, _ := json.Marshal(cursor{After: after})
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(db.sign(payload, fingerprint))
}

func (db *DB) sign(payload []byte, fingerprint string) []byte {
	mac := hmac.New(sha256.New, db.secret)
	mac.Write([]byte(fingerprint))
	mac.Write([]byte{0})
	mac.Write(payload)
	return mac.Sum(nil)[:16]
}

// decodeCursor returns the position of a cursor, 0 for none, and EINVALID
// for one that was not made by this server for this tenant and filter.
func (db *DB) decodeCursor(s, fingerprint string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	bad := engram.Errorf(engram.EINVALID, "invalid cursor; use next_cursor from the previous page with the same filters")
	p, sig, ok := strings.Cut(s, ".")
	if !ok || len(s) > 256 {
		return 0, bad
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, db.sign(payload, fingerprint)) {
		return 0, bad
	}
	var c cursor
	if err := json.Unmarshal(payload, &c); err != nil || c.After <= 0 {
		return 0, bad
	}
	return c.After, nil
}
