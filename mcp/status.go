package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
)

type statusArgs struct{}

type statusResult struct {
	Engram         string   `json:"engram" jsonschema:"version"`
	Transport      string   `json:"transport" jsonschema:"stdio or http"`
	TenantID       string   `json:"tenant_id" jsonschema:"the memory space this connection reads and writes"`
	KeyID          string   `json:"key_id,omitempty" jsonschema:"the API key it acts with; absent over stdio without one"`
	Store          string   `json:"store" jsonschema:"ok, or unavailable"`
	Categories     []string `json:"categories"`
	MaxTokenBudget int      `json:"max_token_budget"`
}

func (b *toolbox) addStatus() {
	addTool(b, &sdk.Tool{
		Name: "status",
		Description: "Check the memory connection: engram's version, which tenant this connection acts for, whether " +
			"the store answers, the categories a memory may have and the largest token budget.",
		Annotations: &sdk.ToolAnnotations{Title: "Status", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, nil, func(ctx context.Context, _ *statusArgs) (*statusResult, error) {
		return b.s.status(ctx, b.transport)
	})
}

func (s *Server) status(ctx context.Context, transport string) (*statusResult, error) {
	actor := engram.ActorFromContext(ctx)
	out := &statusResult{Engram: s.cfg.Version, Transport: transport, TenantID: engram.TenantFromContext(ctx),
		KeyID: actor.KeyID, Store: "ok", Categories: s.cfg.Categories, MaxTokenBudget: s.cfg.Limits.MaxBudget}
	if out.Categories == nil {
		out.Categories = []string{}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if s.cfg.Health != nil {
		if err := s.cfg.Health.Ping(ctx); err != nil {
			s.cfg.Logger.Error("mcp status: store unavailable", "err", err, "request_id", actor.RequestID)
			out.Store = "unavailable"
		}
	}
	return out, nil
}
