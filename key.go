package engram

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// KeyLimits bounds a key's size.
type KeyLimits struct {
	MaxBytes        int
	MaxSegmentBytes int
}

// NormalizeKey checks a logical key such as "/user/preference/style" and
// returns its canonical form. engram refuses ambiguous or unsafe keys
// instead of rewriting them, so two spellings never name one memory:
// the key must start with "/", have no empty segment ("//" or a trailing
// "/"), no "." or ".." segment, no control character (NUL, newline),
// valid UTF-8, and stay within the limits. The file mirror percent-encodes segments and
// shortens long ones with a hash when it maps keys to paths.
func NormalizeKey(raw string, lim KeyLimits) (string, error) {
	if raw == "" || raw[0] != '/' {
		return "", Errorf(EINVALID, "key must start with \"/\"")
	}
	if !utf8.ValidString(raw) {
		return "", Errorf(EINVALID, "key is not valid UTF-8")
	}
	if len(raw) > lim.MaxBytes {
		return "", Errorf(EINVALID, "key is longer than %d bytes", lim.MaxBytes)
	}
	for _, r := range raw {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return "", Errorf(EINVALID, "key contains a control character (%U)", r)
		}
	}
	if raw == "/" {
		return "", Errorf(EINVALID, "key must have at least one segment")
	}
	for _, seg := range strings.Split(raw[1:], "/") {
		switch {
		case seg == "":
			return "", Errorf(EINVALID, "key has an empty segment (\"//\" or a trailing \"/\")")
		case seg == "." || seg == "..":
			return "", Errorf(EINVALID, "key segment %q is not allowed", seg)
		case len(seg) > lim.MaxSegmentBytes:
			return "", Errorf(EINVALID, "key segment is longer than %d bytes", lim.MaxSegmentBytes)
		}
	}
	return raw, nil
}

// KeyCategory returns the first segment of key that is one of categories,
// e.g. "preference" for "/user/preference/style", or "" when none is.
func KeyCategory(key string, categories []string) string {
	for _, seg := range strings.Split(strings.TrimPrefix(key, "/"), "/") {
		for _, c := range categories {
			if seg == c {
				return c
			}
		}
	}
	return ""
}

// Source kinds that must carry full provenance.
var provenanceKinds = map[string]bool{"web": true, "tool": true, "file": true}

// Provenance is the minimum evidence trail of external content.
type Provenance struct {
	Kind        string          `json:"kind"`
	Name        string          `json:"name"`
	RetrievedAt string          `json:"retrieved_at"`
	Locator     json.RawMessage `json:"locator"`
}

// OriginPrefix starts every origin key (see Memory.Origin).
const OriginPrefix = "origin:"

// AllOrigins is the key under which the store sums the helpfulness
// evidence of every memory of a tenant, the reference an origin's is
// compared with.
const AllOrigins = OriginPrefix + "*"

// OriginSourceChars is how much of a memory's source names its origin.
const OriginSourceChars = 512

// Origin names the way a memory was written: the agent that wrote it,
// its source's kind and name (or the source string) and its type.
// Memories of one origin — one extractor's notes, one importer's facts —
// share a reputation (see Helpfulness), so that what feedback learns of
// some of them reaches the others before anyone has judged them.
//
// A source of OriginSourceChars characters or more counts only by being
// long: recall reads no more of it than that.
func (m *Memory) Origin() string {
	var src string
	if utf8.RuneCount(m.Source) >= OriginSourceChars {
		src = "\x00long"
	} else if json.Unmarshal(m.Source, &src) != nil {
		var p Provenance
		if json.Unmarshal(m.Source, &p) == nil {
			src = p.Kind + "/" + p.Name
		}
	}
	sum := sha256.Sum256([]byte(m.AgentID + "\x1f" + src + "\x1f" + m.Type))
	return OriginPrefix + hex.EncodeToString(sum[:8])
}

// CheckProvenance validates the source of a key write. A source is
// required: a non-empty JSON string or an object. Keys under /kb/ and
// sources of kind web, tool or file must be objects with kind, name,
// retrieved_at (RFC 3339) and a non-empty locator. The error names the
// missing fields.
func CheckProvenance(key string, source json.RawMessage) error {
	s := strings.TrimSpace(string(source))
	if s == "" || s == "null" {
		return Errorf(EINVALID, "source is required")
	}
	var str string
	if json.Unmarshal(source, &str) == nil {
		if strings.TrimSpace(str) == "" {
			return Errorf(EINVALID, "source must not be empty")
		}
		if strings.HasPrefix(key, "/kb/") {
			return Errorf(EINVALID, "source of a /kb/ key must be an object with kind, name, retrieved_at and locator")
		}
		return nil
	}
	var p Provenance
	if s[0] != '{' || json.Unmarshal(source, &p) != nil {
		return Errorf(EINVALID, "source must be a string or an object")
	}
	if !strings.HasPrefix(key, "/kb/") && !provenanceKinds[p.Kind] {
		return nil
	}
	var missing []string
	if p.Kind == "" {
		missing = append(missing, "kind")
	}
	if p.Name == "" {
		missing = append(missing, "name")
	}
	if p.RetrievedAt == "" {
		missing = append(missing, "retrieved_at")
	} else if _, err := time.Parse(time.RFC3339, p.RetrievedAt); err != nil {
		return Errorf(EINVALID, "source.retrieved_at must be an RFC 3339 time, got %q", p.RetrievedAt)
	}
	if l := strings.TrimSpace(string(p.Locator)); l == "" || l == "null" || l == "{}" || l == `""` || l == "[]" {
		missing = append(missing, "locator")
	}
	if len(missing) > 0 {
		return Errorf(EINVALID, "source lacks provenance (%s) required for /kb/ keys and web, tool or file sources", strings.Join(missing, ", "))
	}
	return nil
}
