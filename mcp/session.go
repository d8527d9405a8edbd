package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

type sessionEventArgs struct {
	UserID     string          `json:"user_id,omitempty" jsonschema:"the end user this call is for: their memories and the shared ones; omit for shared only"`
	SessionID  string          `json:"session_id" jsonschema:"the conversation or run, e.g. its thread id; 1-128 of A-Z a-z 0-9 . _ : -"`
	Type       string          `json:"type" jsonschema:"what happened"`
	Speaker    string          `json:"speaker,omitempty" jsonschema:"message: who said it (or give role)"`
	Role       string          `json:"role,omitempty" jsonschema:"message: user or assistant (or give speaker)"`
	Content    string          `json:"content,omitempty" jsonschema:"the text; required except for tool_call"`
	At         string          `json:"at,omitempty" jsonschema:"message: when it was said, RFC 3339; default now"`
	MessageID  string          `json:"message_id,omitempty" jsonschema:"message: the product's id for it, kept as provenance"`
	Name       string          `json:"name,omitempty" jsonschema:"tool_call: the tool"`
	Args       json.RawMessage `json:"args,omitempty" jsonschema:"tool_call: its arguments"`
	Result     json.RawMessage `json:"result,omitempty" jsonschema:"tool_call: what it returned"`
	ResourceID string          `json:"resource_id,omitempty" jsonschema:"the user or document this session belongs to, fixed by its first event"`
}

type sessionEventResult struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status" jsonschema:"open, or closed once ended"`
	Seq       int64  `json:"seq" jsonschema:"the event's number in the session"`
	Events    int64  `json:"events" jsonschema:"events the session holds"`
	MemoryID  string `json:"memory_id,omitempty" jsonschema:"a message becomes this long-term episode memory"`
}

func (b *toolbox) addSessionEvent() {
	addTool(b, &sdk.Tool{
		Name: "session_event",
		Description: "Record one event of the current conversation or task in working memory: a message (it is also " +
			"remembered long-term at once, with the message before it as context), the trigger, the query or a sub-task " +
			"you turn to, a decision, a tool call with its result, a model response, or an instruction to keep in view. " +
			"prompt renders the session within a budget.",
		Annotations: &sdk.ToolAnnotations{Title: "Session event", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		enum(s, "type", engram.EventTypes...)
	}, b.s.sessionEvent)
}

func (s *Server) sessionEvent(ctx context.Context, a *sessionEventArgs) (*sessionEventResult, error) {
	e := &engram.SessionEvent{Type: a.Type, Speaker: a.Speaker, Role: a.Role, Content: a.Content, MessageID: a.MessageID,
		Name: a.Name, Args: a.Args, Result: a.Result}
	if a.At != "" {
		at, err := time.Parse(time.RFC3339Nano, a.At)
		if err != nil {
			return nil, engram.Errorf(engram.EINVALID, "at: want an RFC 3339 time such as 2030-01-02T15:04:05Z")
		}
		e.At = &at
	}
	res, err := s.cfg.Sessions.AppendEvents(ctx, a.SessionID, engram.EventBatch{ResourceID: a.ResourceID, Events: []*engram.SessionEvent{e}})
	if err != nil {
		return nil, err
	}
	ev := res.Events[0]
	return &sessionEventResult{SessionID: res.Session.ID, Status: res.Session.Status, Seq: ev.Seq, Events: res.Session.Events,
		MemoryID: ev.MemoryID}, nil
}

type promptArgs struct {
	UserID      string `json:"user_id,omitempty" jsonschema:"the end user this call is for: their memories and the shared ones; omit for shared only"`
	Query       string `json:"query" jsonschema:"what the next answer is about"`
	TokenBudget *int   `json:"token_budget,omitempty" jsonschema:"most tokens the whole prompt section may take"`
	AgentID     string `json:"agent_id,omitempty" jsonschema:"the agent answering; its persona comes first"`
	SessionID   string `json:"session_id,omitempty" jsonschema:"the session whose working memory to include"`
	Hops        *int   `json:"hops,omitempty" jsonschema:"also bring memories linked to the best matches: 0 none (default), 1 or 2 links away"`
}

type promptPart struct {
	Name   string  `json:"name" jsonschema:"persona, session or memories"`
	Tokens int     `json:"tokens"`
	Share  float64 `json:"share" jsonschema:"the part's tokens over the budget"`
}

type promptResult struct {
	Context     string       `json:"context" jsonschema:"persona, session context and recalled memories, ready to use, within the budget"`
	TokensUsed  int          `json:"tokens_used"`
	TokenBudget int          `json:"token_budget"`
	Parts       []promptPart `json:"parts"`
	RecallID    string       `json:"recall_id" jsonschema:"pass it to feedback once the user judges the answer"`
}

func (b *toolbox) addPrompt() {
	addTool(b, &sdk.Tool{
		Name: "prompt",
		Description: "Build the whole memory section of a prompt in one token budget: the agent's persona, the session's " +
			"working memory (recent rounds whole, older ones compressed) and the long-term memories recalled for the query. " +
			"Keep the recall_id: feedback on it teaches engram which memories help.",
		Annotations: &sdk.ToolAnnotations{Title: "Prompt", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		between(s, "token_budget", 1, float64(b.s.cfg.Limits.MaxBudget))
		defaultValue(s, "token_budget", b.s.defaultBudget())
	}, b.s.prompt)
}

func (s *Server) prompt(ctx context.Context, a *promptArgs) (*promptResult, error) {
	budget := s.defaultBudget()
	if a.TokenBudget != nil {
		budget = *a.TokenBudget
	}
	p, err := s.cfg.Prompt.Prompt(ctx, engram.PromptRequest{Query: a.Query, TokenBudget: budget, AgentID: a.AgentID, SessionID: a.SessionID, Hops: a.Hops})
	if err != nil {
		return nil, err
	}
	parts := make([]promptPart, len(p.Parts))
	for i, pt := range p.Parts {
		parts[i] = promptPart{Name: pt.Name, Tokens: pt.Tokens, Share: pt.Share}
	}
	return &promptResult{Context: p.Context, TokensUsed: p.TokensUsed, TokenBudget: p.TokenBudget, Parts: parts, RecallID: p.RecallID}, nil
}
