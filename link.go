package engram

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Link is a directed, named edge from one memory to another: "this
// memory answers that one", "this corrects that". A link belongs to the
// memory it starts from (From): making or removing it is a new version of
// that memory, recorded in its history as a "link" or "unlink" event. A
// link whose either end is tombstoned stops counting: it is neither
// listed nor followed by recall, and counts again if the memory is
// rolled back to life.
type Link struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Relation string `json:"relation"`
	// Version is the version of From the link was made at.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
}

// The documented relations. Any other relation is free text (see
// NormalizeRelation); these are the ones engram makes itself or that
// clients are expected to share.
const (
	RelRelated     = "related"     // loosely about the same thing
	RelAnswers     = "answers"     // From answers or replies to To
	RelAnsweredBy  = "answered_by" // To is the next turn of From's conversation (engram links episodes so)
	RelMentions    = "mentions"    // From names the entity To is about
	RelCorrects    = "corrects"    // From corrects To
	RelSupports    = "supports"    // From is evidence for To
	RelContradicts = "contradicts" // From contradicts To
	RelPartOf      = "part_of"     // From is a part or detail of To
	RelFollows     = "follows"     // From happened after, or continues, To
	RelSameEntity  = "same_entity" // both name the same rare entity
)

// Relations are the documented relations, in the order of the docs.
var Relations = []string{RelRelated, RelAnswers, RelAnsweredBy, RelMentions, RelCorrects, RelSupports, RelContradicts,
	RelPartOf, RelFollows, RelSameEntity}

// Link event actions in a memory's history (see MemoryEvent).
const (
	ActionLink   = "link"
	ActionUnlink = "unlink"
)

// MaxRelationRunes bounds a free-text relation.
const MaxRelationRunes = 64

// NormalizeRelation trims and lower-cases a relation and checks it: one
// of Relations, or free text of 1–64 characters without control
// characters or "/" (a relation is a path segment of the unlink route).
// An empty relation is "related".
func NormalizeRelation(raw string) (string, error) {
	r := strings.ToLower(strings.TrimSpace(raw))
	if r == "" {
		return RelRelated, nil
	}
	if !utf8.ValidString(r) {
		return "", Errorf(EINVALID, "relation is not valid UTF-8")
	}
	if utf8.RuneCountInString(r) > MaxRelationRunes {
		return "", Errorf(EINVALID, "relation is longer than %d characters", MaxRelationRunes)
	}
	for _, c := range r {
		if unicode.IsControl(c) || c == '/' {
			return "", Errorf(EINVALID, "relation must not contain control characters or \"/\"")
		}
	}
	return r, nil
}

// LinkService stores links between a tenant's memories.
type LinkService interface {
	// CreateLink links l.From to l.To with l.Relation (normalized) as a
	// new version of l.From, and returns the link. Linking again what is
	// already linked changes nothing and returns the existing link.
	// ENOTFOUND when either memory is missing or tombstoned, EINVALID for
	// a self-link or a bad relation.
	CreateLink(ctx context.Context, l Link) (*Link, error)
	// DeleteLink removes the link from → to with relation ("" removes
	// every relation between them) as a new version of from, and returns
	// the links removed. ENOTFOUND when there is none.
	DeleteLink(ctx context.Context, from, to, relation string) ([]*Link, error)
	// FindLinks returns the live links of a memory in both directions,
	// oldest first. ENOTFOUND when the memory does not exist.
	FindLinks(ctx context.Context, id string) ([]*Link, error)
	// FindLinksOf returns the live links touching any of ids, in both
	// directions, for recall's hops; unknown ids are skipped.
	FindLinksOf(ctx context.Context, ids []string) ([]*Link, error)
}
