package engram

import (
	"context"
	"time"
)

// Reflection is one L3 reflection (DESIGN §5): Markdown that the reflector
// writes from a group of a tenant's live L2 memories — what is known, what
// worked, what failed or misled, contradictions, open questions — with
// every claim citing the memories it rests on. A reflection never decides
// alone what is injected; recall may add it for queries that look back.
// A group keeps one reflection, whose versions are kept.
type Reflection struct {
	ID       string `json:"id"`
	Group    string `json:"group"` // "work", "work/falcon" (subcategory), "life#Caroline" (tag)
	Category string `json:"category"`
	// UserID is the end user whose memories the group holds, for a group
	// of one user's memories (docs/users.md); "" for the shared ones.
	UserID   string `json:"user_id,omitempty"`
	Title    string `json:"title"`
	Version  int64  `json:"version"`
	Markdown string `json:"markdown"`
	// HTML is the Markdown rendered (GFM tables and task lists; raw HTML
	// in the source is omitted), filled when one reflection is read.
	HTML    string      `json:"html,omitempty"`
	Cited   []MemoryRef `json:"cited"`   // memory versions its claims cite
	Members []MemoryRef `json:"members"` // the group it was written from
	// Fingerprint identifies the group's members and versions and the
	// writer: a group whose fingerprint did not change is not re-written.
	Fingerprint string `json:"fingerprint"`
	Writer      string `json:"writer"`             // "extractive", or "chat:<model>"
	Fallback    string `json:"fallback,omitempty"` // why the chat writer's text was not used
	TokenCount  int    `json:"token_count"`
	// UpCount and DownCount are the feedback on recalls that injected it.
	UpCount   int64     `json:"up_count"`
	DownCount int64     `json:"down_count"`
	CreatedAt time.Time `json:"created_at"` // of this version
}

// ReflectionFilter selects reflections of the caller's tenant, newest
// first. Nil fields are not applied.
type ReflectionFilter struct {
	Category *string
	// UserID keeps exactly this end user's reflections ("" the shared
	// ones); nil keeps every user's (an operator's list), as
	// MemoryFilter.UserID does.
	UserID *string
	// Visible keeps only what a read for the context's user may see (the
	// shared reflections and that user's, never another user's): the rule
	// of a recall, for a tool that shows reflections to a model.
	Visible bool
	Limit   int
	Cursor  string
}

// ReflectionPage is one page of FindReflections.
type ReflectionPage struct {
	Items      []*Reflection
	NextCursor string
}

// ReflectRequest asks the reflector to reflect the tenant's groups, or
// only those of one category.
type ReflectRequest struct {
	Category string `json:"category,omitempty"`
}

// ReflectOutcome is what the reflector did with one group.
type ReflectOutcome struct {
	Group   string `json:"group"`
	ID      string `json:"id,omitempty"`
	Version int64  `json:"version,omitempty"`
	Writer  string `json:"writer,omitempty"`
	// Reason says why a group was skipped or failed, or why the chat
	// writer fell back to the extractive one.
	Reason string `json:"reason,omitempty"`
}

// ReflectResult reports one run of the reflector.
type ReflectResult struct {
	Groups  int              `json:"groups"`  // groups of at least the minimum size
	Written []ReflectOutcome `json:"written"` // new reflections and new versions
	Skipped []ReflectOutcome `json:"skipped"` // unchanged since their last version
	Failed  []ReflectOutcome `json:"failed"`  // could not be stored
}

// ReflectionService writes and reads the L3 reflections of the tenant in
// the context.
type ReflectionService interface {
	// Reflect writes a reflection for every group that changed since its
	// last one. EINVALID for an unknown category.
	Reflect(ctx context.Context, req ReflectRequest) (*ReflectResult, error)
	// FindReflections returns a page of current reflections. EINVALID for
	// a bad cursor.
	FindReflections(ctx context.Context, f ReflectionFilter) (*ReflectionPage, error)
	// FindReflectionByID returns the current version with its HTML.
	// ENOTFOUND.
	FindReflectionByID(ctx context.Context, id string) (*Reflection, error)
	// FindReflectionVersions returns every version, oldest first.
	// ENOTFOUND.
	FindReflectionVersions(ctx context.Context, id string) ([]*Reflection, error)
}
