package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// keyContent is the optional metadata set_memory reads from a content
// object when the request does not set it.
type keyContent struct {
	Text       *string          `json:"text"`
	Content    *string          `json:"content"`
	Value      *string          `json:"value"`
	Summary    *string          `json:"summary"`
	Category   *string          `json:"category"`
	Type       *string          `json:"type"`
	Tags       *[]string        `json:"tags"`
	Importance *float64         `json:"importance"`
	Priority   *engram.Priority `json:"priority"`
	AgentID    *string          `json:"agent_id"`
	ExpiresAt  *time.Time       `json:"expires_at"`
	ExpiredAt  *time.Time       `json:"expired_at"` // the spelling of the original set_memory notes
}

// SetKey implements engram.MemoryService: set_memory(key, content,
// source). The memory at key is replaced whole (last write wins); "null"
// tombstones it (a no-op on a tombstone, ENOTFOUND on a key never
// written); any other JSON, "{}" included, is valid content. The text
// that is searched and injected is the content itself when it is a JSON
// string, else its "text", "content" or "value" field, else the compact
// JSON. A source lacking required provenance is refused, or stored under
// /untrusted/ when the policy quarantines.
func (db *DB) SetKey(ctx context.Context, w engram.KeyWrite) (*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	key, err := engram.NormalizeKey(w.Key, db.policy.Keys)
	if err != nil {
		return nil, err
	}
	if err := engram.CheckProvenance(key, w.Source); err != nil {
		if !db.policy.QuarantineUntrust || engram.ErrorCode(err) != engram.EINVALID || isEmptySource(w.Source) {
			return nil, err
		}
		if key, err = engram.NormalizeKey(strings.TrimSuffix(untrustedPrefix, "/")+key, db.policy.Keys); err != nil {
			return nil, err
		}
	}
	content := bytes.TrimSpace(w.Content)
	if len(content) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "content is required (JSON null tombstones the key)")
	}
	if bytes.Equal(content, []byte("null")) {
		return db.tombstoneKey(ctx, tenant, key, w.ExpectVersion)
	}
	fresh, err := db.keyMemory(key, content, w)
	if err != nil {
		return nil, err
	}
	if _, err := findRow(db.r.WithContext(ctx), tenant, "key = ?", key); engram.ErrorCode(err) == engram.ENOTFOUND {
		if w.ExpectVersion != nil {
			return nil, engram.Errorf(engram.ECONFLICT, "key does not exist at version %d", *w.ExpectVersion)
		}
		res, err := db.CreateMemory(ctx, fresh)
		if engram.ErrorCode(err) != engram.ECONFLICT {
			if err != nil {
				return nil, err
			}
			return res.Memory, nil
		}
		// Lost a race to create the key: fall through and replace it.
	} else if err != nil {
		return nil, err
	}
	return db.mutate(ctx, "key = ?", key, w.ExpectVersion, engram.ActionUpdate, func(_ *gorm.DB, m *engram.Memory) (bool, error) {
		fresh.ID, fresh.Version, fresh.CreatedAt = m.ID, m.Version, m.CreatedAt
		if fresh.AgentID == "" && w.AgentID == nil {
			// A replace that does not name an owner keeps the old one: it
			// must never turn an agent's private memory into a shared one.
			fresh.AgentID = m.AgentID
		}
		fresh.Reward, fresh.UpCount, fresh.DownCount, fresh.NeedsRevision = m.Reward, m.UpCount, m.DownCount, m.NeedsRevision
		fresh.Stability, fresh.AccessCount, fresh.LastAccessedAt = m.Stability, m.AccessCount, m.LastAccessedAt
		if fresh.Priority != m.Priority {
			fresh.Stability = db.policy.Stability[fresh.Priority]
		}
		fresh.Valid, fresh.Archived = true, false
		*m = *fresh
		return true, nil
	})
}

// untrustedPrefix is where quarantined writes go (memory.untrusted:
// quarantine).
const untrustedPrefix = "/untrusted/"

func isEmptySource(s json.RawMessage) bool {
	t := strings.TrimSpace(string(s))
	return t == "" || t == "null" || t == `""`
}

func (db *DB) tombstoneKey(ctx context.Context, tenant, key string, expect *int64) (*engram.Memory, error) {
	if _, err := findRow(db.r.WithContext(ctx), tenant, "key = ?", key); err != nil {
		return nil, err
	}
	return db.mutate(ctx, "key = ?", key, expect, engram.ActionTombstone, func(_ *gorm.DB, m *engram.Memory) (bool, error) {
		if !m.Valid {
			return false, nil
		}
		m.Valid = false
		return true, nil
	})
}

// keyMemory builds the memory a key write describes, with defaults.
func (db *DB) keyMemory(key string, content []byte, w engram.KeyWrite) (*engram.Memory, error) {
	m := &engram.Memory{Key: key, Data: json.RawMessage(content), Source: w.Source}
	var meta keyContent
	if content[0] == '{' {
		_ = json.Unmarshal(content, &meta) // optional fields; wrong types are simply not metadata
	}
	var str string
	switch {
	case json.Unmarshal(content, &str) == nil:
		m.Content = str
	case meta.Text != nil:
		m.Content = *meta.Text
	case meta.Content != nil:
		m.Content = *meta.Content
	case meta.Value != nil:
		m.Content = *meta.Value
	default:
		var buf bytes.Buffer
		if err := json.Compact(&buf, content); err != nil {
			return nil, engram.Errorf(engram.EINVALID, "content is not valid JSON")
		}
		m.Content = buf.String()
	}
	if strings.TrimSpace(m.Content) == "" {
		m.Content = string(content) // "" or {"text":""}: keep the JSON as the text
	}
	pick := func(dst *string, a, b *string) {
		if a != nil {
			*dst = *a
		} else if b != nil {
			*dst = *b
		}
	}
	pick(&m.Category, w.Category, meta.Category)
	pick(&m.Type, w.Type, meta.Type)
	pick(&m.Summary, w.Summary, meta.Summary)
	pick(&m.AgentID, w.AgentID, meta.AgentID)
	if m.Category == "" {
		m.Category = engram.KeyCategory(key, db.policy.Categories)
	}
	if m.Category == "" && strings.HasPrefix(key, "/kb/") {
		m.Category = engram.CategoryKB
	}
	switch {
	case w.Tags != nil:
		m.Tags = *w.Tags
	case meta.Tags != nil:
		m.Tags = *meta.Tags
	}
	switch {
	case w.Importance != nil:
		m.Importance = *w.Importance
	case meta.Importance != nil:
		m.Importance = *meta.Importance
	}
	switch {
	case w.Priority != nil:
		m.Priority = *w.Priority
	case meta.Priority != nil:
		m.Priority = *meta.Priority
	}
	switch {
	case w.ExpiresAt != nil:
		m.ExpiresAt = w.ExpiresAt
	case meta.ExpiresAt != nil:
		m.ExpiresAt = meta.ExpiresAt
	case meta.ExpiredAt != nil:
		m.ExpiresAt = meta.ExpiredAt
	}
	db.applyDefaults(m)
	return m, db.validate(m)
}

// FindMemoryByKey implements engram.MemoryService.
func (db *DB) FindMemoryByKey(ctx context.Context, key string) (*engram.Memory, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if key, err = engram.NormalizeKey(key, db.policy.Keys); err != nil {
		return nil, err
	}
	row, err := findRow(db.r.WithContext(ctx), tenant, "key = ?", key)
	if err != nil {
		return nil, err
	}
	m := row.toMemory()
	switch {
	case !m.Valid:
		return nil, engram.Errorf(engram.ENOTFOUND, "key %s is tombstoned", key)
	case m.Expired(db.now()):
		return nil, engram.Errorf(engram.ENOTFOUND, "key %s expired at %s", key, m.ExpiresAt.Format(time.RFC3339))
	}
	return m, nil
}
