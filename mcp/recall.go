package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

// defaultBudget is the token budget of recall, boot and prompt when the
// call sets none (engram.DefaultBudget; the REST API requires one).
func (s *Server) defaultBudget() int {
	return engram.DefaultBudget(s.cfg.Limits.MaxBudget)
}

type recallArgs struct {
	UserID      string   `json:"user_id,omitempty" jsonschema:"the end user this call is for: their memories and the shared ones; omit for shared only"`
	Query       string   `json:"query" jsonschema:"what you need to know, in the user's words or yours, any language"`
	TokenBudget *int     `json:"token_budget,omitempty" jsonschema:"most tokens the returned context may take"`
	Tags        []string `json:"tags,omitempty" jsonschema:"prefer memories with these tags"`
	AgentID     string   `json:"agent_id,omitempty" jsonschema:"also search this agent's private memories"`
	SessionID   string   `json:"session_id,omitempty" jsonschema:"the conversation this recall serves, recorded with it"`
	Fill        bool     `json:"fill,omitempty" jsonschema:"pack every match that fits the budget, not only the relevant ones"`
	Identity    bool     `json:"identity,omitempty" jsonschema:"put the pinned identity memories (who the user is) first, whatever the query"`
	Hops        *int     `json:"hops,omitempty" jsonschema:"also bring memories linked to the best matches: 0 none (default), 1 or 2 links away"`
}

type recallItem struct {
	ID          string                 `json:"id"`
	Key         string                 `json:"key,omitempty"`
	Category    string                 `json:"category"`
	Text        string                 `json:"text" jsonschema:"what was put in the context: the content, or its summary"`
	Tokens      int                    `json:"tokens"`
	UsedSummary bool                   `json:"used_summary,omitempty"`
	Score       float64                `json:"score"`
	Via         *engram.Via            `json:"via,omitempty" jsonschema:"the memory this one was reached from by a link, and the relation"`
	Speaker     float64                `json:"speaker,omitempty" jsonschema:"the factor its score took for being said by a speaker the query does not name, when it names another"`
	Concept     *engram.Concept        `json:"concept,omitempty" jsonschema:"the category word of the query (activities, pets, 爱好) and the member of it the memory holds, in index form (swim)"`
	Pinned      bool                   `json:"pinned,omitempty" jsonschema:"injected as context whatever the query (a pinned identity memory that was not the best match); feedback does not credit it"`
	Explored    bool                   `json:"explored,omitempty" jsonschema:"let in by a kind probe though the kinds it belongs to are distrusted, so that feedback can tell whether they still mislead"`
	Features    []engram.FeatureWeight `json:"features,omitempty" jsonschema:"the learned kinds of memory (origin, type, shape, …) that moved its score most, at most three, with their weights: below 0 distrusted, above 0 trusted"`
}

type recallRoute struct {
	Intent     string   `json:"intent"`
	Mode       string   `json:"mode"`
	Categories []string `json:"categories"`
}

type recallResult struct {
	RecallID       string       `json:"recall_id" jsonschema:"pass it to feedback once the user judges the answer"`
	Context        string       `json:"context" jsonschema:"the memories that answer the query, ready to use, within the budget; empty when nothing relevant is known"`
	Items          []recallItem `json:"items"`
	TokensUsed     int          `json:"tokens_used"`
	TokenBudget    int          `json:"token_budget"`
	Route          recallRoute  `json:"route"`
	DegradeReasons []string     `json:"degrade_reasons,omitempty"`
}

func (b *toolbox) addRecall() {
	addTool(b, &sdk.Tool{
		Name: "recall",
		Description: "Recall what is known that bears on a query, as a context block ready to use, within a token budget. " +
			"Call it before answering anything that may depend on the user (who they are, what they prefer, what they " +
			"decided) or on earlier work. Keep the recall_id: feedback on it teaches engram which memories help.",
		Annotations: &sdk.ToolAnnotations{Title: "Recall", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		between(s, "token_budget", 1, float64(b.s.cfg.Limits.MaxBudget))
		defaultValue(s, "token_budget", b.s.defaultBudget())
		between(s, "hops", 0, engram.MaxHops)
	}, b.s.recall)
}

func (s *Server) recall(ctx context.Context, a *recallArgs) (*recallResult, error) {
	budget := s.defaultBudget()
	if a.TokenBudget != nil {
		budget = *a.TokenBudget
	}
	rec, err := s.cfg.Recall.Recall(ctx, engram.RecallRequest{Query: a.Query, TokenBudget: budget, Tags: a.Tags,
		AgentID: a.AgentID, SessionID: a.SessionID, Fill: a.Fill, Identity: a.Identity, Hops: a.Hops})
	if err != nil {
		return nil, err
	}
	items := make([]recallItem, len(rec.Items))
	for i, it := range rec.Items {
		items[i] = recallItem{ID: it.ID, Key: it.Key, Category: it.Category, Text: it.Text, Tokens: it.Tokens,
			UsedSummary: it.UsedSummary, Score: it.Score, Via: it.Via, Speaker: it.Breakdown.Speaker, Concept: it.Concept,
			Pinned: it.Breakdown.Pinned, Explored: it.Breakdown.Explored, Features: it.Breakdown.Features}
	}
	cats := rec.Route.Categories
	if cats == nil {
		cats = []string{}
	}
	return &recallResult{RecallID: rec.ID, Context: rec.Context, Items: items, TokensUsed: rec.TokensUsed,
		TokenBudget: rec.TokenBudget, DegradeReasons: rec.DegradeReasons,
		Route: recallRoute{Intent: string(rec.Route.Intent), Mode: string(rec.Route.Mode), Categories: cats}}, nil
}

type bootArgs struct {
	UserID     string `json:"user_id,omitempty" jsonschema:"the end user this call is for: their memories and the shared ones; omit for shared only"`
	AgentID    string `json:"agent_id,omitempty" jsonschema:"the agent starting; its own persona comes first"`
	TokenLimit *int   `json:"token_limit,omitempty" jsonschema:"most tokens the context may take"`
}

type bootMemory struct {
	ID       string `json:"id"`
	Key      string `json:"key,omitempty"`
	Category string `json:"category"`
	Content  string `json:"content"`
}

type bootResult struct {
	Persona    string       `json:"persona" jsonschema:"the persona document; empty when none is set"`
	Context    string       `json:"context" jsonschema:"persona and identity memories, ready to put first in the conversation"`
	TokensUsed int          `json:"tokens_used"`
	Memories   []bootMemory `json:"memories" jsonschema:"the P0 identity memories"`
}

func (b *toolbox) addBoot() {
	addTool(b, &sdk.Tool{
		Name: "boot",
		Description: "Load who you are and who the user is: the persona and the identity memories (priority P0) that " +
			"belong at the start of every conversation. Call it once when a conversation begins.",
		Annotations: &sdk.ToolAnnotations{Title: "Boot", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		between(s, "token_limit", 1, float64(b.s.cfg.Limits.MaxBudget))
		defaultValue(s, "token_limit", b.s.defaultBudget())
	}, b.s.boot)
}

func (s *Server) boot(ctx context.Context, a *bootArgs) (*bootResult, error) {
	limit := s.defaultBudget()
	if a.TokenLimit != nil {
		limit = *a.TokenLimit
	}
	bt, err := s.cfg.Recall.Boot(ctx, a.AgentID, limit)
	if err != nil {
		return nil, err
	}
	ms := make([]bootMemory, len(bt.Memories))
	for i, m := range bt.Memories {
		ms[i] = bootMemory{ID: m.ID, Key: m.Key, Category: m.Category, Content: m.Content}
	}
	return &bootResult{Persona: bt.Persona, Context: bt.Context, TokensUsed: bt.TokensUsed, Memories: ms}, nil
}
