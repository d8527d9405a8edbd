package engram

import (
	"context"
	"time"
)

// Alias is another key path for a memory that has a key (seed 003's URI
// aliases): reading, writing or deleting the key at Alias acts on the
// memory at Key. An alias belongs to one end user like a key (UserID, ""
// shared) and points at that user's memory; it is a version of that
// memory, recorded in its history as an "alias" or "unalias" event.
type Alias struct {
	Alias     string    `json:"alias"`
	Key       string    `json:"key"` // the target memory's key
	MemoryID  string    `json:"memory_id"`
	UserID    string    `json:"user_id,omitempty"`
	Version   int64     `json:"version"` // the target's version that made the alias
	CreatedAt time.Time `json:"created_at"`
	// Valid is whether the target is live: a tombstoned or expired target
	// makes the alias answer 404 on reads until it is written again.
	Valid bool `json:"valid"`
}

// Alias event actions in a memory's history (see MemoryEvent).
const (
	ActionAlias   = "alias"
	ActionUnalias = "unalias"
)

// AliasService stores key aliases. The user is the context's
// (UserFromContext), as for keys.
type AliasService interface {
	// SetAlias makes alias another path of the user's live memory at
	// key. EINVALID for a bad key or alias, or alias == key; ENOTFOUND
	// when no live memory of the user has key; ECONFLICT when key is
	// itself an alias (no chains), when a live key of the user is at
	// alias (no shadowing) or when alias already points elsewhere.
	// Setting an alias again to the same memory changes nothing.
	SetAlias(ctx context.Context, alias, key string) (*Alias, error)
	// FindAlias returns the user's alias. ENOTFOUND.
	FindAlias(ctx context.Context, alias string) (*Alias, error)
	// DeleteAlias removes the user's alias as a version of its target
	// and returns it. ENOTFOUND.
	DeleteAlias(ctx context.Context, alias string) (*Alias, error)
	// FindAliases returns every alias of a memory (every user's), oldest
	// first. ENOTFOUND when the memory does not exist.
	FindAliases(ctx context.Context, memoryID string) ([]*Alias, error)
}
