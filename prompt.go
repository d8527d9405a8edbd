package engram

import "context"

// PromptRequest asks for one prompt section within one token budget.
type PromptRequest struct {
	Query       string `json:"query"`
	TokenBudget int    `json:"token_budget"`
	AgentID     string `json:"agent_id,omitempty"`
	UserID      string `json:"user_id,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	Hops        *int   `json:"hops,omitempty"` // as RecallRequest.Hops
}

// PromptPart is one part of a prompt and its share of the budget.
type PromptPart struct {
	Name    string  `json:"name"` // "persona", "session" or "memories"
	Context string  `json:"context"`
	Tokens  int     `json:"tokens"`
	Share   float64 `json:"share"` // Tokens / the budget
}

// Prompt is the persona, the session's context and the recalled memories
// joined into one string that fits the budget when re-counted.
type Prompt struct {
	Context     string       `json:"context"`
	TokensUsed  int          `json:"tokens_used"`
	TokenBudget int          `json:"token_budget"`
	Parts       []PromptPart `json:"parts"`
	// RecallID names the recall of the memories part, for feedback.
	RecallID string  `json:"recall_id"`
	Recall   *Recall `json:"recall"`
}

// PromptService builds prompts for the tenant in the context.
type PromptService interface {
	// Prompt assembles the prompt. EINVALID for an empty query or a
	// budget out of range; ENOTFOUND for an unknown session.
	Prompt(ctx context.Context, req PromptRequest) (*Prompt, error)
}
