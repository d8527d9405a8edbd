package engram

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Rules are the validation limits and defaults that every write path
// (HTTP, MCP, CLI, the sleep cycle) shares. The store applies them inside
// its transactions; they are stated here, once.
type Rules struct {
	Memory  MemoryConfig
	Limits  LimitsConfig
	Scoring ScoringConfig // a new memory's stability by priority
}

// DefaultRules returns the rules of the default configuration.
func DefaultRules() Rules {
	return Rules{Memory: DefaultMemoryConfig(), Limits: DefaultLimitsConfig(), Scoring: DefaultScoringConfig()}
}

// UntrustedPrefix is where quarantined key writes go (memory.untrusted:
// quarantine).
const UntrustedPrefix = "/untrusted/"

// ApplyDefaults fills what a new memory did not set; a zero confidence or
// importance counts as not set (a memory nobody trusts is not worth
// storing, and the scorer would rank it at zero).
func (r Rules) ApplyDefaults(m *Memory) {
	if m.Category == "" {
		m.Category = r.Memory.DefaultCategory
	}
	if m.Priority == "" {
		m.Priority = r.Memory.DefaultPriority
	}
	if m.Confidence == 0 {
		m.Confidence = r.Memory.DefaultConfidence
	}
	if m.Importance == 0 {
		m.Importance = 0.5
	}
	if m.SecurityLevel == "" {
		m.SecurityLevel = SecurityInternal
	}
	if m.Tags == nil {
		m.Tags = []string{}
	}
}

// Validate checks m against the rules and normalises its tags (trimmed,
// duplicates dropped). EINVALID or ETOOLARGE name the offending field.
func (r Rules) Validate(m *Memory) error {
	lim := r.Limits
	if strings.TrimSpace(m.Content) == "" {
		return Errorf(EINVALID, "content must not be empty")
	}
	if n := utf8.RuneCountInString(m.Content); n > lim.MaxContentChars {
		return Errorf(ETOOLARGE, "content has %d characters; the limit is %d", n, lim.MaxContentChars)
	}
	if n := utf8.RuneCountInString(m.Context); n > lim.MaxContentChars {
		return Errorf(ETOOLARGE, "context has %d characters; the limit is %d", n, lim.MaxContentChars)
	}
	if n := utf8.RuneCountInString(m.Summary); n > lim.MaxSummaryChars {
		return Errorf(ETOOLARGE, "summary has %d characters; the limit is %d", n, lim.MaxSummaryChars)
	}
	if len(m.Data) > 4*lim.MaxContentChars {
		return Errorf(ETOOLARGE, "data is larger than %d bytes", 4*lim.MaxContentChars)
	}
	if !slices.Contains(r.Memory.Categories, m.Category) {
		return Errorf(EINVALID, "unknown category %q; known: %s", m.Category, strings.Join(r.Memory.Categories, ", "))
	}
	if !m.Priority.Valid() {
		return Errorf(EINVALID, "priority must be P0, P1, P2 or P3")
	}
	for name, v := range map[string]float64{"importance": m.Importance, "confidence": m.Confidence} {
		if v < 0 || v > 1 || v != v {
			return Errorf(EINVALID, "%s must be between 0 and 1", name)
		}
	}
	if err := CheckEmotion(m.Emotion); err != nil {
		return err
	}
	if !ValidSecurityLevel(m.SecurityLevel) {
		return Errorf(EINVALID, "security_level must be public, internal, confidential or secret")
	}
	// A new agent id is held to CheckID where it enters: internal/wire
	// checks every agent_id field of a request, and a key write the one its
	// content names (KeyMemory). Here the older, looser rule stays, so that
	// a memory stored under it can still be updated, rolled back and merged
	// by the sleep cycle.
	for name, v := range map[string]string{"agent_id": m.AgentID, "subcategory": m.Subcategory, "type": m.Type} {
		if len(v) > 128 || hasControl(v) {
			return Errorf(EINVALID, "%s must be at most 128 bytes without control characters", name)
		}
	}
	if m.Key != "" {
		if _, err := NormalizeKey(m.Key, lim.KeyLimits()); err != nil {
			return err
		}
	}
	// Provenance holds on every write path, PATCH and batch included: a
	// keyed memory always has a source, and /kb/ keys and web, tool or
	// file sources carry the full trail. Quarantined keys are exempt.
	if !strings.HasPrefix(m.Key, UntrustedPrefix) && (m.Key != "" || !IsEmptySource(m.Source)) {
		if err := CheckProvenance(m.Key, m.Source); err != nil {
			return err
		}
	}
	if len(m.Tags) > lim.MaxTags {
		return Errorf(EINVALID, "%d tags; the limit is %d", len(m.Tags), lim.MaxTags)
	}
	tags := make([]string, 0, len(m.Tags))
	for _, t := range m.Tags {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			return Errorf(EINVALID, "tags must not be empty")
		case utf8.RuneCountInString(t) > lim.MaxTagChars:
			return Errorf(EINVALID, "tag %.20q… is longer than %d characters", t, lim.MaxTagChars)
		case hasControl(t):
			return Errorf(EINVALID, "tags must not contain control characters")
		}
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	m.Tags = tags
	return nil
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// IsEmptySource reports a missing source: absent, null or "".
func IsEmptySource(s json.RawMessage) bool {
	t := strings.TrimSpace(string(s))
	return t == "" || t == "null" || t == `""`
}

// KeyTarget normalises the key of a set_memory write and checks its
// source. A source lacking required provenance is refused, or, when the
// rules quarantine, the write is redirected under UntrustedPrefix. A
// tombstone (content null) needs a source but no retrieval trail: it says
// who removed the key, and nothing was retrieved.
func (r Rules) KeyTarget(w KeyWrite) (string, error) {
	key, err := NormalizeKey(w.Key, r.Limits.KeyLimits())
	if err != nil {
		return "", err
	}
	if bytes.Equal(bytes.TrimSpace(w.Content), []byte("null")) {
		if IsEmptySource(w.Source) {
			return "", Errorf(EINVALID, "source is required")
		}
		return key, nil
	}
	if err := CheckProvenance(key, w.Source); err != nil {
		if r.Memory.Untrusted != "quarantine" || ErrorCode(err) != EINVALID || IsEmptySource(w.Source) {
			return "", err
		}
		return NormalizeKey(strings.TrimSuffix(UntrustedPrefix, "/")+key, r.Limits.KeyLimits())
	}
	return key, nil
}

// keyContent is the optional metadata set_memory reads from a content
// object when the request does not set it.
type keyContent struct {
	Text       *string    `json:"text"`
	Content    *string    `json:"content"`
	Value      *string    `json:"value"`
	Summary    *string    `json:"summary"`
	Category   *string    `json:"category"`
	Type       *string    `json:"type"`
	Tags       *[]string  `json:"tags"`
	Importance *float64   `json:"importance"`
	Priority   *Priority  `json:"priority"`
	Emotion    *float64   `json:"emotion"`
	AgentID    *string    `json:"agent_id"`
	ExpiresAt  *time.Time `json:"expires_at"`
	ExpiredAt  *time.Time `json:"expired_at"` // the spelling of the original set_memory notes
}

// KeyMemory builds the memory a set_memory write describes at key (from
// KeyTarget), defaulted and validated. content is the trimmed JSON, not
// null. The text that is searched and injected is the content itself when
// it is a JSON string, else its "text", "content" or "value" field, else
// the compact JSON. Metadata the request leaves unset is read from the
// content object's fields of the same name; the category falls back to the
// first key segment that names one, then kb under /kb/, then the default.
func (r Rules) KeyMemory(key string, content []byte, w KeyWrite) (*Memory, error) {
	m := &Memory{Key: key, Data: json.RawMessage(content), Source: w.Source}
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
			return nil, Errorf(EINVALID, "content is not valid JSON")
		}
		m.Content = buf.String()
	}
	if strings.TrimSpace(m.Content) == "" {
		m.Content = string(content) // "" or {"text":""}: keep the JSON as the text
	}
	pick(&m.Category, w.Category, meta.Category)
	pick(&m.Type, w.Type, meta.Type)
	pick(&m.Summary, w.Summary, meta.Summary)
	pick(&m.AgentID, w.AgentID, meta.AgentID)
	if err := CheckOptionalID("agent_id", m.AgentID); err != nil {
		return nil, err
	}
	pick(&m.Tags, w.Tags, meta.Tags)
	pick(&m.Importance, w.Importance, meta.Importance)
	pick(&m.Priority, w.Priority, meta.Priority)
	m.Emotion = w.Emotion
	if m.Emotion == nil {
		m.Emotion = meta.Emotion
	}
	switch {
	case w.ExpiresAt != nil:
		m.ExpiresAt = w.ExpiresAt
	case meta.ExpiresAt != nil:
		m.ExpiresAt = meta.ExpiresAt
	case meta.ExpiredAt != nil:
		m.ExpiresAt = meta.ExpiredAt
	}
	if m.Category == "" {
		m.Category = KeyCategory(key, r.Memory.Categories)
	}
	if m.Category == "" && strings.HasPrefix(key, "/kb/") {
		m.Category = CategoryKB
	}
	r.ApplyDefaults(m)
	return m, r.Validate(m)
}

// pick sets dst to the first of a and b that is set.
func pick[T any](dst *T, a, b *T) {
	if a != nil {
		*dst = *a
	} else if b != nil {
		*dst = *b
	}
}

// ReplaceAtKey turns fresh, a key write's memory, into the next state of
// old, the memory at that key (last write wins). What feedback and use
// taught the old memory stays: reward, votes, revision flag, stability
// (reset when the priority changes), access statistics. A replace that
// names no owner keeps the old one: it must never turn an agent's private
// memory into a shared one. ownerNamed says whether the write named one.
func (r Rules) ReplaceAtKey(old, fresh *Memory, ownerNamed bool) {
	fresh.ID, fresh.Version, fresh.CreatedAt = old.ID, old.Version, old.CreatedAt
	if fresh.AgentID == "" && !ownerNamed {
		fresh.AgentID = old.AgentID
	}
	fresh.Reward, fresh.UpCount, fresh.DownCount, fresh.NeedsRevision = old.Reward, old.UpCount, old.DownCount, old.NeedsRevision
	fresh.Stability, fresh.AccessCount, fresh.LastAccessedAt = old.Stability, old.AccessCount, old.LastAccessedAt
	fresh.ReinforcedAt = old.ReinforcedAt
	if fresh.Priority != old.Priority {
		fresh.Stability = r.Scoring.Stability(fresh.Priority)
	}
	fresh.Valid, fresh.Archived = true, false
}
