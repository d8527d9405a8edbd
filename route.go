package engram

import "context"

// Intent is what a query wants.
type Intent string

// Intents.
const (
	IntentAsk     Intent = "ask"     // seeks facts
	IntentDecide  Intent = "decide"  // asks for a choice or a plan
	IntentReflect Intent = "reflect" // looks back for lessons
)

// Mode is how a query should be retrieved.
type Mode string

// Retrieval modes.
const (
	ModeFactual     Mode = "factual"
	ModeExploratory Mode = "exploratory"
	ModeTemporal    Mode = "temporal"
	ModeCausal      Mode = "causal"
)

// Memory layers a route can search.
const (
	LayerL1 = "L1" // working memory of the run
	LayerL2 = "L2" // long-term JSON memories
	LayerL3 = "L3" // Markdown reflections
)

// Default L2 categories. Deployments may configure more.
const (
	CategoryWork       = "work"
	CategoryLife       = "life"
	CategoryPreference = "preference"
	CategoryEmotion    = "emotion"
	CategoryStrategy   = "strategy"
	CategoryKB         = "kb" // external knowledge; keys under /kb/
)

// DefaultCategories are the domains every tenant starts with.
var DefaultCategories = []string{CategoryWork, CategoryLife, CategoryPreference, CategoryEmotion, CategoryStrategy, CategoryKB}

// DomainScore is one scored domain of a route, in [0, 1].
type DomainScore struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// Route is what the query router makes of a query.
type Route struct {
	Intent     Intent        `json:"intent"`
	Mode       Mode          `json:"mode"`
	Domains    []DomainScore `json:"domains"`    // best first
	Categories []string      `json:"categories"` // L2 categories to search
	Layers     []string      `json:"layers"`
	// Identity says the answer depends on who the user is — the query
	// speaks of the user in the first person singular (I, my, 我, not we or
	// 我们), asks for a choice made for them (decide), or is about their
	// preferences — and is false for questions about others, the team or
	// facts ("when does the team ship?"): the recall injects the pinned
	// identity block (P0 memories) as context only when it is true.
	Identity bool `json:"identity"`
}

// RouterService routes queries for the tenant in the context.
type RouterService interface {
	// RouteQuery classifies query. EINVALID for an empty query.
	RouteQuery(ctx context.Context, query string) (*Route, error)
}
