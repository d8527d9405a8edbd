package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/mcp"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/store/storetest"
)

// seed stores 1,000 short bilingual memories for tenant acme.
func seed(b *testing.B, db *store.DB) {
	ctx := storetest.Tenant(b, db, "acme")
	words := strings.Fields("coffee tea release deploy budget travel dentist invoice garden piano 咖啡 绿茶 会议 旅行 预算 牙科")
	for i := 0; i < 1000; i += 100 {
		ms := make([]*engram.Memory, 100)
		for j := range ms {
			n := i + j
			ms[j] = &engram.Memory{Category: "work", Content: fmt.Sprintf("note %d: %s and %s, then %s", n,
				words[n%len(words)], words[(n/3)%len(words)], words[(n/7)%len(words)])}
		}
		if _, err := db.CreateMemories(ctx, ms); err != nil {
			b.Fatal(err)
		}
	}
}

func callTool(b *testing.B, c *sdk.ClientSession, name string, args map[string]any) {
	res, err := c.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %v", name, err, res)
	}
}

// BenchmarkHTTPTools measures tool calls over streamable HTTP (loopback,
// one client, SQLite, 1,000 memories), and the same recall through the
// REST API for comparison: the difference is what MCP costs.
func BenchmarkHTTPTools(b *testing.B) {
	db := storetest.Open(b, "sqlite")
	e := newEnv(b, db)
	k := key(b, db, "acme")
	seed(b, db)
	c := connect(b, k, e.srv.URL)
	call := func(b *testing.B, name string, args map[string]any) { callTool(b, c.S, name, args) }
	b.Run("status", func(b *testing.B) {
		for b.Loop() {
			call(b, "status", map[string]any{})
		}
	})
	b.Run("recall", func(b *testing.B) {
		for b.Loop() {
			call(b, "recall", map[string]any{"query": "coffee and the release budget", "token_budget": 500})
		}
	})
	b.Run("recall-rest", func(b *testing.B) {
		for b.Loop() {
			if status, body := rest(b, e, k, http.MethodPost, "/v1/recall", `{"query":"coffee and the release budget","token_budget":500}`); status != http.StatusOK {
				b.Fatalf("%d %s", status, body)
			}
		}
	})
	b.Run("remember", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			call(b, "remember", map[string]any{"content": fmt.Sprintf("benchmark memory %d", n), "category": "work"})
		}
	})
}

// BenchmarkStdioTools measures the same calls over the stdio transport
// (in-process pipes, one client, SQLite, 1,000 memories).
func BenchmarkStdioTools(b *testing.B) {
	db := storetest.Open(b, "sqlite")
	e := newEnv(b, db)
	seed(b, db)
	tenant, err := db.EnsureTenant(context.Background(), "acme")
	if err != nil {
		b.Fatal(err)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.tools.RunStdio(ctx, mcp.Identity{TenantID: tenant.ID}, sr, sw) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close(); cancel(); <-done })
	b.Run("status", func(b *testing.B) {
		for b.Loop() {
			callTool(b, cs, "status", map[string]any{})
		}
	})
	b.Run("recall", func(b *testing.B) {
		for b.Loop() {
			callTool(b, cs, "recall", map[string]any{"query": "coffee and the release budget", "token_budget": 500})
		}
	})
	b.Run("remember", func(b *testing.B) {
		n := 0
		for b.Loop() {
			n++
			callTool(b, cs, "remember", map[string]any{"content": fmt.Sprintf("stdio benchmark memory %d", n), "category": "work"})
		}
	})
}
