// Package mcptest drives engram's MCP tools end to end with the SDK's own
// client: the scenario every transport must pass (streamable HTTP in
// mcp's tests, stdio against the built binary in cmd/engram's), and the
// helpers to call a tool and check its result against the tool's schemas.
package mcptest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools are the tools engram serves today, as tools/list names them.
var Tools = []string{"alias", "boot", "feedback", "forget", "link", "prompt", "recall", "reflect", "remember", "session_event", "set_memory", "status"}

// Client is one MCP session with the tools it listed.
type Client struct {
	S     *sdk.ClientSession
	tools map[string]*sdk.Tool
}

// NewClient lists s's tools and checks that they are engram's, each with a
// description, an object input schema and an output schema.
func NewClient(t testing.TB, s *sdk.ClientSession) *Client {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	c := &Client{S: s, tools: map[string]*sdk.Tool{}}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		c.tools[tool.Name] = tool
		if len(tool.Description) < 40 || tool.OutputSchema == nil {
			t.Errorf("tool %s: description %q, output schema %v", tool.Name, tool.Description, tool.OutputSchema)
		}
		if in, _ := tool.InputSchema.(map[string]any); in["type"] != "object" {
			t.Errorf("tool %s: input schema %v", tool.Name, tool.InputSchema)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, Tools) {
		t.Fatalf("tools/list: %v, want %v", names, Tools)
	}
	return c
}

// Call calls a tool that must succeed. The arguments must satisfy the
// tool's input schema and the structured result its output schema; the
// text content must be the same JSON. It returns the structured result.
func (c *Client) Call(t testing.TB, name string, args map[string]any) map[string]any {
	t.Helper()
	validate(t, name+" arguments", c.tools[name].InputSchema, args)
	res := c.call(t, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", name, args, text(t, res))
	}
	body, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, body, err)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text(t, res)), &fromText); err != nil || !jsonEqual(fromText, out) {
		t.Fatalf("%s: text content %q is not the structured result %s", name, text(t, res), body)
	}
	validate(t, name+" result", c.tools[name].OutputSchema, out)
	return out
}

// CallError calls a tool that must fail with a tool error (not a protocol
// error) and returns the error's code and message.
func (c *Client) CallError(t testing.TB, name string, args any) (code, message string) {
	t.Helper()
	res := c.call(t, name, args)
	if !res.IsError {
		t.Fatalf("%s %v: want a tool error, got %s", name, args, text(t, res))
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(text(t, res)), &body); err != nil || body.Error.Code == "" {
		t.Fatalf("%s: tool error %q is not {\"error\":{\"code\",\"message\"}}", name, text(t, res))
	}
	return body.Error.Code, body.Error.Message
}

func (c *Client) call(t testing.TB, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := c.S.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func text(t testing.TB, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("want text content, got %T", res.Content[0])
	}
	return tc.Text
}

func validate(t testing.TB, what string, schema any, v map[string]any) {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: schema %s: %v", what, b, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: schema %s: %v", what, b, err)
	}
	var inst any
	vb, _ := json.Marshal(v)
	_ = json.Unmarshal(vb, &inst)
	if err := rs.Validate(inst); err != nil {
		t.Fatalf("%s %s does not satisfy the advertised schema: %v", what, vb, err)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Scenario is what an MCP client must be able to do over any transport:
// a and other are sessions of two tenants on one store, both new.
func Scenario(t *testing.T, a, other *Client) {
	// remember, then recall finds it; the same content again is kept once.
	coffee := a.Call(t, "remember", map[string]any{"content": "User drinks coffee black, no sugar", "category": "preference", "tags": []string{"coffee"}})
	if coffee["created"] != true {
		t.Fatalf("remember: %v", coffee)
	}
	coffeeID := memory(coffee)["id"].(string)
	if again := a.Call(t, "remember", map[string]any{"content": "User drinks coffee  black, no sugar", "category": "preference"}); again["deduplicated"] != true || memory(again)["id"] != coffeeID {
		t.Fatalf("the same content again: %v", again)
	}
	rec := a.Call(t, "recall", map[string]any{"query": "How does the user take their coffee?", "token_budget": 200})
	if !Recalled(rec, coffeeID) || !strings.Contains(rec["context"].(string), "User drinks coffee black, no sugar") {
		t.Fatalf("recall does not find the memory: %v", rec)
	}
	// Chinese is first-class: a two-character word finds its memory.
	tea := a.Call(t, "remember", map[string]any{"content": "用户下午只喝绿茶，不喝咖啡", "category": "preference"})
	if zh := a.Call(t, "recall", map[string]any{"query": "绿茶"}); !Recalled(zh, memory(tea)["id"].(string)) {
		t.Fatalf("recall 绿茶: %v", zh)
	}

	// feedback on the recall changes the memory's reward, and it is stored.
	fb := a.Call(t, "feedback", map[string]any{"recall_id": rec["recall_id"], "thumb": "up", "reason": "right"})
	var reward float64
	for _, cr := range fb["credited"].([]any) {
		if cr := cr.(map[string]any); cr["id"] == coffeeID {
			reward = cr["reward"].(float64)
		}
	}
	if reward <= 0 {
		t.Fatalf("feedback up credited %v, want the memory's reward raised from 0", fb["credited"])
	}
	edited := a.Call(t, "remember", map[string]any{"id": coffeeID, "tags": []string{"coffee", "drinks"}})
	if m := memory(edited); m["reward"] != reward || m["up_count"] != float64(1) || m["version"] != float64(3) {
		t.Fatalf("after feedback and an edit: %v, want reward %v and one up vote", m, reward)
	}
	down := a.Call(t, "feedback", map[string]any{"memory_id": coffeeID, "rating": 1, "rater": "carol"})
	if cr := down["credited"].([]any)[0].(map[string]any); cr["reward"].(float64) >= reward {
		t.Fatalf("a rating of 1 left the reward at %v (was %v)", cr["reward"], reward)
	}

	// set_memory: a key is written, replaced, and deleted with null.
	set := a.Call(t, "set_memory", map[string]any{"key": "/user/preference/milk", "content": map[string]any{"text": "oat milk in every latte"}, "source": "chat"})
	milkID := memory(set)["id"].(string)
	if memory(set)["category"] != "preference" || set["deleted"] != false {
		t.Fatalf("set_memory: %v", set)
	}
	set = a.Call(t, "set_memory", map[string]any{"key": "/user/preference/milk", "content": "oat milk in every latte, extra hot", "source": map[string]any{"kind": "chat", "name": "session 12"}})
	if memory(set)["id"] != milkID || memory(set)["version"] != float64(2) {
		t.Fatalf("set_memory again replaces: %v", set)
	}
	if r := a.Call(t, "recall", map[string]any{"query": "oat milk latte"}); !Recalled(r, milkID) {
		t.Fatalf("recall after set_memory: %v", r)
	}
	if del := a.Call(t, "set_memory", map[string]any{"key": "/user/preference/milk", "content": nil, "source": "chat"}); del["deleted"] != true || memory(del)["valid"] != false {
		t.Fatalf("set_memory null: %v", del)
	}
	if r := a.Call(t, "recall", map[string]any{"query": "oat milk latte"}); Recalled(r, milkID) {
		t.Fatalf("recall still finds a deleted key: %v", r)
	}

	// forget by key, also under /kb/, where every write needs provenance;
	// forgetting twice changes nothing.
	kb := a.Call(t, "set_memory", map[string]any{"key": "/kb/travel/paris", "content": "Paris has 20 arrondissements",
		"source": map[string]any{"kind": "web", "name": "encyclopedia", "retrieved_at": "2026-01-02T03:04:05Z", "locator": "https://example.org/paris"}})
	for range 2 {
		if f := a.Call(t, "forget", map[string]any{"key": "/kb/travel/paris"}); memory(f)["id"] != memory(kb)["id"] || memory(f)["valid"] != false {
			t.Fatalf("forget a /kb/ key: %v", f)
		}
	}

	// forget by id.
	if f := a.Call(t, "forget", map[string]any{"id": memory(tea)["id"]}); memory(f)["valid"] != false {
		t.Fatalf("forget: %v", f)
	}
	if zh := a.Call(t, "recall", map[string]any{"query": "绿茶"}); Recalled(zh, memory(tea)["id"].(string)) {
		t.Fatalf("recall finds a forgotten memory: %v", zh)
	}

	// boot: P0 identity memories and the persona come first.
	ada := a.Call(t, "remember", map[string]any{"content": "The user's name is Ada Lovelace", "category": "life", "priority": "P0"})
	a.Call(t, "set_memory", map[string]any{"key": "/agent/persona", "content": "You are a concise assistant.", "source": "setup"})
	boot := a.Call(t, "boot", map[string]any{})
	if boot["persona"] != "You are a concise assistant." || !strings.Contains(boot["context"].(string), "Ada Lovelace") ||
		len(boot["memories"].([]any)) != 1 || boot["memories"].([]any)[0].(map[string]any)["id"] != memory(ada)["id"] {
		t.Fatalf("boot: %v", boot)
	}

	// reflect: three strategy memories make a topic, written up once.
	for _, text := range []string{"Deploying on Tuesdays kept the weekend quiet", "Small pull requests were reviewed within a day",
		"Skipping the staging soak caused the March outage"} {
		a.Call(t, "remember", map[string]any{"content": text, "category": "strategy"})
	}
	refl := a.Call(t, "reflect", map[string]any{"category": "strategy"})
	if len(refl["written"].([]any)) != 1 || len(refl["reflections"].([]any)) != 1 ||
		!strings.Contains(refl["reflections"].([]any)[0].(map[string]any)["markdown"].(string), "Deploying on Tuesdays") {
		t.Fatalf("reflect: %v", refl)
	}
	if again := a.Call(t, "reflect", map[string]any{}); len(again["written"].([]any)) != 0 || len(again["skipped"].([]any)) != 1 {
		t.Fatalf("reflect with nothing changed: %v", again)
	}

	// session_event: messages become episodes; prompt joins persona,
	// session and memories in one budget, and its recall takes feedback.
	a.Call(t, "set_memory", map[string]any{"key": "/agents/planner/persona", "content": "You plan trips. Be brief.", "source": "setup"})
	first := a.Call(t, "session_event", map[string]any{"session_id": "trip-1", "type": "message", "speaker": "Ada",
		"content": "We land in Kyoto on Friday evening", "at": "2026-03-06T18:00:00Z", "message_id": "m1", "resource_id": "user:ada"})
	if first["seq"] != float64(1) || first["status"] != "open" || first["memory_id"] == "" {
		t.Fatalf("session_event: %v", first)
	}
	a.Call(t, "session_event", map[string]any{"session_id": "trip-1", "type": "tool_call", "name": "hotels", "args": map[string]any{"city": "Kyoto"}, "result": "3 found"})
	a.Call(t, "session_event", map[string]any{"session_id": "trip-1", "type": "decision", "content": "book the ryokan near Gion"})
	pr := a.Call(t, "prompt", map[string]any{"query": "When does Ada land in Kyoto?", "token_budget": 400, "agent_id": "planner", "session_id": "trip-1"})
	var parts []string
	for _, p := range pr["parts"].([]any) {
		parts = append(parts, p.(map[string]any)["name"].(string))
	}
	if strings.Join(parts, ",") != "persona,session,memories" || pr["tokens_used"].(float64) > 400 || pr["recall_id"] == "" ||
		!strings.Contains(pr["context"].(string), "[2026-03-06] Ada: We land in Kyoto on Friday evening") {
		t.Fatalf("prompt: %v", pr)
	}
	a.Call(t, "feedback", map[string]any{"recall_id": pr["recall_id"], "thumb": "up"})
	if b := a.Call(t, "boot", map[string]any{"agent_id": "planner"}); b["persona"] != "You plan trips. Be brief." {
		t.Fatalf("boot of the planner: %v", b)
	}

	// Bad arguments are tool errors with the REST API's codes and messages.
	for _, bad := range []struct {
		tool          string
		args          map[string]any
		code, message string
	}{
		{"recall", map[string]any{"query": "coffee", "token_budget": "lots"}, "invalid", "token_budget: want a number, got string"},
		{"recall", map[string]any{"query": "  "}, "invalid", "query must not be empty"},
		{"recall", map[string]any{"query": "coffee", "token_budget": 0}, "invalid", "token_budget must be between 1 and 8000"},
		{"recall", map[string]any{"query": "coffee", "budget": 10}, "invalid", `unknown field "budget"`},
		{"remember", map[string]any{"content": "x", "category": "gossip"}, "invalid", "unknown category \"gossip\"; known: work, life, preference, emotion, strategy, kb"},
		{"remember", map[string]any{"category": "life"}, "invalid", "content must not be empty"},
		{"set_memory", map[string]any{"key": "/user//name", "content": "Ada", "source": "chat"}, "invalid", "key has an empty segment (\"//\" or a trailing \"/\")"},
		{"set_memory", map[string]any{"key": "/user/name", "content": "Ada"}, "invalid", "source is required"},
		{"set_memory", map[string]any{"key": "/user/name", "source": "chat"}, "invalid", "content is required (JSON null tombstones the key)"},
		{"feedback", map[string]any{"recall_id": rec["recall_id"], "thumb": "sideways"}, "invalid", "thumb must be up or down"},
		{"feedback", map[string]any{"recall_id": rec["recall_id"]}, "invalid", "give a thumb (up or down) or a rating (1-5)"},
		{"forget", map[string]any{"id": "mem_doesnotexist"}, "not_found", ""},
		{"forget", map[string]any{}, "invalid", "give exactly one of id, key"},
		{"boot", map[string]any{"token_limit": 9000}, "invalid", "token_limit must be between 1 and 8000"},
		{"reflect", map[string]any{"limit": 0}, "invalid", "limit must be between 1 and 20"},
		{"session_event", map[string]any{"session_id": "trip-1", "type": "thought", "content": "x"}, "invalid", "unknown event type \"thought\"; one of message, trigger, query, subtask, decision, tool_call, llm_response, instruction"},
		{"session_event", map[string]any{"session_id": "a/b", "type": "decision", "content": "x"}, "invalid", "session_id must be 1-128 characters of A-Z a-z 0-9 . _ : - without \"..\""},
		{"session_event", map[string]any{"session_id": "trip-1", "type": "message", "content": "x"}, "invalid", "a message needs speaker or role"},
		{"prompt", map[string]any{"query": "x", "session_id": "nope"}, "not_found", "no session nope"},
		{"prompt", map[string]any{"query": " "}, "invalid", "query must not be empty"},
	} {
		code, msg := a.CallError(t, bad.tool, bad.args)
		if code != bad.code || (bad.message != "" && msg != bad.message) {
			t.Errorf("%s %v: %s %q, want %s %q", bad.tool, bad.args, code, msg, bad.code, bad.message)
		}
	}

	// Another tenant's key sees nothing of a's, and can touch nothing.
	if r := other.Call(t, "recall", map[string]any{"query": "coffee black sugar"}); len(r["items"].([]any)) != 0 {
		t.Fatalf("another tenant recalls %v", r["items"])
	}
	if b := other.Call(t, "boot", map[string]any{}); len(b["memories"].([]any)) != 0 || b["persona"] != "" {
		t.Fatalf("another tenant boots with %v", b)
	}
	if r := other.Call(t, "reflect", map[string]any{}); r["groups"] != float64(0) || len(r["reflections"].([]any)) != 0 {
		t.Fatalf("another tenant reflects on %v", r)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"prompt", map[string]any{"query": "Kyoto", "session_id": "trip-1"}},
		{"forget", map[string]any{"id": coffeeID}},
		{"remember", map[string]any{"id": coffeeID, "content": "hijacked"}},
		{"feedback", map[string]any{"memory_id": coffeeID, "thumb": "down"}},
		{"feedback", map[string]any{"recall_id": rec["recall_id"], "thumb": "down"}},
	} {
		if code, _ := other.CallError(t, call.tool, call.args); code != "not_found" {
			t.Errorf("another tenant's %s %v: %s, want not_found", call.tool, call.args, code)
		}
	}
	if r := a.Call(t, "recall", map[string]any{"query": "How does the user take their coffee?"}); !Recalled(r, coffeeID) {
		t.Fatalf("after the other tenant's attempts: %v", r)
	}
	sa, so := a.Call(t, "status", map[string]any{}), other.Call(t, "status", map[string]any{})
	if sa["store"] != "ok" || sa["tenant_id"] == so["tenant_id"] || sa["tenant_id"] == "" {
		t.Fatalf("status: %v and %v", sa, so)
	}
}

// Recalled reports whether a recall result injected the memory id.
func Recalled(rec map[string]any, id string) bool {
	for _, it := range rec["items"].([]any) {
		if it.(map[string]any)["id"] == id {
			return true
		}
	}
	return false
}

func memory(res map[string]any) map[string]any {
	return res["memory"].(map[string]any)
}
