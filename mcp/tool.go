package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// tools are engram's MCP tools (tools/list sorts them by name). Each entry
// adds one tool; a new tool is one function here and its handler.
var tools = []func(*toolbox){
	(*toolbox).addBoot,
	(*toolbox).addRecall,
	(*toolbox).addRemember,
	(*toolbox).addSetMemory,
	(*toolbox).addForget,
	(*toolbox).addLink,
	(*toolbox).addAlias,
	(*toolbox).addFeedback,
	(*toolbox).addReflect,
	(*toolbox).addSessionEvent,
	(*toolbox).addPrompt,
	(*toolbox).addStatus,
}

// toolbox adds tools to one SDK server, for one transport.
type toolbox struct {
	s         *Server
	srv       *sdk.Server
	transport string // "stdio" or "http"
	who       func(*sdk.CallToolRequest) (caller, error)
}

// addTool registers a tool whose arguments decode into In and whose
// structured result is Out. The input and output schemas are inferred from
// the two types (descriptions from their jsonschema tags); shape, when not
// nil, refines the input schema (enums, bounds, defaults). The SDK's own
// typed handlers are not used: they validate and report with messages of
// their own, where engram's tools answer exactly as the REST API does.
func addTool[In, Out any](b *toolbox, t *sdk.Tool, shape func(*jsonschema.Schema), h func(context.Context, *In) (*Out, error)) {
	in := schemaFor[In]()
	for _, p := range in.Properties {
		// Optional pointer fields infer as "null or T"; the model is
		// offered T (null is still read as "not set").
		if i := slices.Index(p.Types, "null"); i >= 0 && len(p.Types) == 2 {
			p.Type, p.Types = p.Types[1-i], nil
		}
	}
	if shape != nil {
		shape(in)
	}
	t.InputSchema, t.OutputSchema = in, schemaFor[Out]()
	b.srv.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return b.call(ctx, t.Name, req, func(ctx context.Context) (any, error) {
			var args In
			if err := b.s.decodeArgs(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			if u := argUser(&args); u != "" {
				ctx = engram.NewContextWithUser(ctx, u)
			}
			return h(ctx, &args)
		}), nil
	})
}

// call runs one tool call for its caller and turns what it returns into a
// result: the structured output (also as JSON text, for clients that read
// only text), or a tool error. A panic is an internal error, logged with
// its stack; the server keeps serving.
func (b *toolbox) call(ctx context.Context, name string, req *sdk.CallToolRequest, run func(context.Context) (any, error)) (res *sdk.CallToolResult) {
	start := time.Now()
	c, err := b.who(req)
	defer func() {
		if v := recover(); v != nil {
			b.s.cfg.Logger.Error("mcp tool panic", "tool", name, "request_id", c.RequestID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res = errorResult(fmt.Errorf("panic: %v", v))
			err = res.GetError()
		}
		b.log(ctx, name, c, start, err)
	}()
	if err != nil {
		return errorResult(err)
	}
	ctx = engram.NewContextWithTenant(ctx, c.TenantID)
	ctx = engram.NewContextWithUser(ctx, c.UserID)
	ctx = engram.NewContextWithActor(ctx, engram.Actor{KeyID: c.KeyID, RequestID: c.RequestID})
	if c.Reader != nil {
		ctx = engram.NewContextWithReader(ctx, *c.Reader)
	}
	out, err := run(ctx)
	if err != nil {
		return errorResult(err)
	}
	body, err := json.Marshal(out)
	if err != nil {
		return errorResult(fmt.Errorf("mcp: encode %s result: %w", name, err))
	}
	res = &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(body)}},
		StructuredContent: json.RawMessage(body),
	}
	if n := engram.Withheld(ctx); n > 0 {
		// As REST's X-Engram-Withheld: memories above the key's clearance
		// left out or masked.
		res.Meta = sdk.Meta{WithheldMeta: n}
	}
	return res
}

// WithheldMeta is the _meta field of a tool result that counts the
// memories above the key's clearance the call left out or masked.
const WithheldMeta = "engram/withheld"

// log writes one line per call; internal errors in full, with the request
// id that the server's own request log and the memory events carry.
func (b *toolbox) log(ctx context.Context, name string, c caller, start time.Time, err error) {
	level := slog.LevelInfo
	attrs := []any{"tool", name, "transport", b.transport, "duration_ms", float64(time.Since(start).Microseconds()) / 1000,
		"request_id", c.RequestID}
	if c.TenantID != "" {
		attrs = append(attrs, "tenant_id", c.TenantID)
	}
	if code := engram.ErrorCode(err); code != "" {
		attrs = append(attrs, "code", code)
		if code == engram.EINTERNAL {
			level = slog.LevelError
			attrs = append(attrs, "err", err)
		}
	}
	b.s.cfg.Logger.Log(ctx, level, "mcp tool", attrs...)
}

// errorResult is a tool error carrying the REST API's error body
// (wire.ErrorBody: the same code and message the REST API would give).
func errorResult(err error) *sdk.CallToolResult {
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(wire.ErrorBody(err))}}}
	res.SetError(err)
	return res
}

// schemaFor infers the JSON Schema of T. json.RawMessage, which holds any
// JSON, is left unconstrained. It panics on a type the inference cannot
// express: the tool types are fixed, and every test lists them.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", *new(T), err))
	}
	return s
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// enum sets a string property's allowed values.
func enum(s *jsonschema.Schema, prop string, values ...string) {
	p := s.Properties[prop]
	p.Enum = make([]any, len(values))
	for i, v := range values {
		p.Enum[i] = v
	}
}

// between sets an integer or number property's bounds.
func between(s *jsonschema.Schema, prop string, lo, hi float64) {
	s.Properties[prop].Minimum, s.Properties[prop].Maximum = &lo, &hi
}

// defaultValue documents the value an absent property takes.
func defaultValue(s *jsonschema.Schema, prop string, v any) {
	b, _ := json.Marshal(v)
	s.Properties[prop].Default = b
}

// argUser is the user_id a tool's arguments name (a string field UserID),
// "" when they name none: the call is scoped to that end user
// (docs/users.md); wire.Decode has checked it.
func argUser(args any) string {
	v := reflect.ValueOf(args).Elem()
	if v.Kind() != reflect.Struct {
		return ""
	}
	f := v.FieldByName("UserID")
	if !f.IsValid() || f.Kind() != reflect.String {
		return ""
	}
	return f.String()
}
