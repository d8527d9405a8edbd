// Package mcp is engram's Model Context Protocol server on the official
// go-sdk: one set of tools over two transports, stdio (engram mcp) and
// streamable HTTP (Handler, which server mounts at /mcp). It calls the
// root package's service interfaces only; cmd/engram wires them.
//
// Every tool has a typed input schema and a structured result. A call that
// fails is a tool error (isError), never a protocol error or a crash: its
// text is the REST API's error body, {"error":{"code","message"}}, with the
// code and message the REST API gives for the same mistake.
package mcp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// Recaller is what recall and boot need.
type Recaller interface {
	engram.RecallService
	// Boot returns the persona and the P0 identity memories within limit
	// tokens. EINVALID for a limit outside [1, max].
	Boot(ctx context.Context, agentID string, limit int) (*engram.Boot, error)
}

// Pinger reports whether the store answers, for status.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Limits bound what one tool call may send.
type Limits struct {
	// MaxArgumentBytes bounds a call's arguments, and over HTTP the whole
	// request body (limits.max_body_bytes).
	MaxArgumentBytes int64
	MaxJSONDepth     int
	// MaxBatch bounds the messages of one JSON-RPC batch, over HTTP and
	// stdio (limits.max_batch; 0: its default), see Handler.
	MaxBatch int
	// MaxBudget is the largest token budget of recall and boot
	// (recall.max_budget); their default budget never exceeds it.
	MaxBudget int
	Keys      engram.KeyLimits
}

// Config holds what New needs.
type Config struct {
	Memories engram.MemoryService
	// Aliases stores key aliases (the alias tool); nil: no tool.
	Aliases  engram.AliasService
	Recall   Recaller
	Feedback engram.FeedbackService
	// Reflections runs the reflector and reads its write-ups (reflect).
	Reflections engram.ReflectionService
	// Jobs, when set, queues a large tenant's reflect as a job; the tool
	// then answers the job and the reflections as they stand.
	Jobs engram.JobService
	// Sessions and Prompt serve session_event and prompt.
	Sessions engram.SessionService
	Prompt   engram.PromptService
	// Auth resolves the bearer keys of HTTP requests; stdio sessions act
	// for the Identity they are started with.
	Auth   engram.AuthService
	Health Pinger
	// Categories are the L2 categories (memory.categories), offered to the
	// model as the choices of a memory's category.
	Categories []string
	// Gate holds remember and set_memory to the write gate (memory.gate:
	// on), as the REST writes are (gate.Policy); GateMode is
	// memory.gate_mode. A tenant's own gate and gate_mode override both.
	Gate     bool
	GateMode string
	Limits   Limits
	Version  string
	Logger   *slog.Logger
}

// Server holds the tools and serves them over either transport.
type Server struct {
	cfg Config
}

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Limits.MaxBatch <= 0 {
		cfg.Limits.MaxBatch = engram.DefaultLimitsConfig().MaxBatch
	}
	return &Server{cfg: cfg}
}

// Identity is whom a stdio session acts for: a tenant, and the API key
// that named it ("" when the tenant came from the configuration).
type Identity struct {
	TenantID string
	KeyID    string
	// Reader is the key's read rights (clearance, masker, its tenant's
	// withhold mode); nil reads with full rights (stdio without a key).
	Reader *engram.Reader
	// UserID is the end user the session acts for when a call names no
	// user_id (auth.user_id, ENGRAM_USER_ID); "" the shared memories.
	UserID string
}

// caller is whom one call acts for.
type caller struct {
	Identity
	RequestID string
}

// instructions tell the model, once per session, how the tools fit
// together.
const instructions = `engram is your long-term memory of this user and this work.
At the start of a conversation call boot. Before answering anything that may depend on the user, their preferences or earlier work, call recall and use its context.
When you learn something worth keeping, call remember (or set_memory for a value that has a name and one current value).
When the user confirms or rejects an answer that used recalled memories, call feedback with the recall_id.
When the user asks what has been learned, call reflect.
During a task, record its events (query, decisions, tool calls) with session_event; prompt gives persona, session and memories in one budget.`

// sdkServer builds one SDK server with every tool; who says whom each
// call acts for.
func (s *Server) sdkServer(transport string, who func(*sdk.CallToolRequest) (caller, error)) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "engram", Title: "engram memory", Version: s.cfg.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		// The SDK logs every session at info; over stateless HTTP that is
		// every request, which the server's request log already has.
		Logger: slog.New(minLevel{s.cfg.Logger.Handler(), slog.LevelWarn}),
		// Tools only: no logging capability (the SDK's default).
		Capabilities: &sdk.ServerCapabilities{},
	})
	b := &toolbox{s: s, srv: srv, transport: transport, who: who}
	for _, add := range tools {
		add(b)
	}
	return srv
}

// RunStdio serves the tools over r and w (newline-delimited JSON-RPC, the
// stdio transport) until the client closes r or ctx ends. Every call acts
// for id. JSON-RPC batches hold to the limits they hold to over HTTP
// (see Handler); a refused batch is answered with one JSON-RPC error and
// none of its calls runs (batchFilter).
func (s *Server) RunStdio(ctx context.Context, id Identity, r io.ReadCloser, w io.WriteCloser) error {
	srv := s.sdkServer("stdio", func(*sdk.CallToolRequest) (caller, error) {
		return caller{Identity: id, RequestID: newRequestID()}, nil
	})
	out := &lockedWriter{w: w}
	in := &batchFilter{s: s, in: bufio.NewReader(r), closer: r, out: out}
	return srv.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type callerKey struct{}

// callerExtra names the caller in the SDK's token info.
const callerExtra = "engram.caller"

// Handler serves the tools over streamable HTTP. Every request needs
// "Authorization: Bearer <key>" and acts for the key's tenant; a missing
// or unknown key is a 401 with the REST API's error body.
//
// The handler is stateless (no Mcp-Session-Id; GET and DELETE are 405):
// an MCP session holds nothing engram needs, so any server sharing the
// database answers any request, behind a load balancer without sticky
// sessions. Responses are plain JSON rather than event streams, since no
// tool sends progress. The SDK's DNS-rebinding guard (403 for a localhost
// connection with another Host) is off: it would refuse every request
// from a reverse proxy on the same host, and a rebinding page cannot know
// the bearer key that every request must carry.
//
// A request body is read by the rules of the REST API's bodies before the
// SDK parses it: over limits.max_body_bytes it is a 413, invalid UTF-8 or
// data after the JSON-RPC message a 400, each with the REST API's error
// body (checkBody). JSON-RPC batches are held to the limits of REST's
// batch rather than refused: MCP 2025-03-26 requires a server to accept
// them (2025-06-18 dropped them, and the SDK refuses a batch from a
// client that negotiated it), so checkBatch refuses one of more than
// limits.max_batch messages (each writes at most one memory, so a batch
// writes no more than /v1/memories/batch may) or naming one key twice
// (engram.CheckBatchKeys), before any of its messages runs: a refused
// batch writes nothing. The calls of an accepted batch are separate calls,
// as JSON-RPC defines them, not one transaction.
func (s *Server) Handler() http.Handler {
	srv := s.sdkServer("http", func(req *sdk.CallToolRequest) (caller, error) {
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			if c, ok := req.Extra.TokenInfo.Extra[callerExtra].(caller); ok {
				return c, nil
			}
		}
		return caller{}, engram.Errorf(engram.EUNAUTHORIZED, "missing API key; send Authorization: Bearer <key>")
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, DisableLocalhostProtection: true,
		MaxRequestBodyBytes: s.cfg.Limits.MaxArgumentBytes,
		Logger:              slog.New(minLevel{s.cfg.Logger.Handler(), slog.LevelWarn}),
	})
	// The SDK hands a request's token info to the tool call it carries;
	// the key was verified below, so the verifier only passes it on.
	withToken := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		c := r.Context().Value(callerKey{}).(caller)
		return &auth.TokenInfo{UserID: c.KeyID, Extra: map[string]any{callerExtra: c}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := s.authenticate(r)
		if err != nil {
			s.writeHTTPError(w, err)
			return
		}
		// The server's request id (X-Request-ID, already on the response)
		// marks the events this request writes, as on the REST API.
		if r.Method == http.MethodPost {
			if err := s.checkBody(w, r); err != nil {
				s.writeHTTPError(w, err)
				return
			}
		}
		c := caller{Identity: Identity{TenantID: key.TenantID, KeyID: key.ID, Reader: ReaderOf(key)},
			RequestID: w.Header().Get("X-Request-ID")}
		if c.RequestID == "" {
			c.RequestID = newRequestID()
		}
		withToken.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// authenticate resolves "Authorization: Bearer <key>" as the REST API does.
func (s *Server) authenticate(r *http.Request) (*engram.APIKey, error) {
	scheme, secret, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return nil, engram.Errorf(engram.EUNAUTHORIZED, "missing API key; send Authorization: Bearer <key>")
	}
	return s.cfg.Auth.Authenticate(r.Context(), strings.TrimSpace(secret))
}

// checkBody reads r's body (wire.ReadBody, wire.CheckEnvelope) and, when
// it is a JSON-RPC batch, checks the batch (checkBatch); it leaves the
// body for the SDK to read again.
func (s *Server) checkBody(w http.ResponseWriter, r *http.Request) error {
	body, err := wire.ReadBody(w, r, s.cfg.Limits.MaxArgumentBytes)
	if err != nil {
		return err
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if err := wire.CheckEnvelope(body); err != nil {
		return err
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		return s.checkBatch(b)
	}
	return nil
}

// batchMessage is what checkBatch reads of a JSON-RPC message.
type batchMessage struct {
	Method string `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// checkBatch refuses a JSON-RPC batch of more than MaxBatch messages, or
// whose set_memory and forget calls name one key twice (see Handler). A
// batch that does not parse is left to the SDK, which answers it.
func (s *Server) checkBatch(body []byte) error {
	var msgs []batchMessage
	if json.Unmarshal(body, &msgs) != nil {
		return nil
	}
	if len(msgs) > s.cfg.Limits.MaxBatch {
		return engram.Errorf(engram.EINVALID, "a JSON-RPC batch may hold at most %d messages, got %d", s.cfg.Limits.MaxBatch, len(msgs))
	}
	keys := make([]string, len(msgs))
	for i, m := range msgs {
		if m.Method != "tools/call" || (m.Params.Name != "set_memory" && m.Params.Name != "forget") {
			continue
		}
		var a struct {
			Key string `json:"key"`
		}
		if json.Unmarshal(m.Params.Arguments, &a) == nil {
			keys[i] = a.Key
		}
	}
	return engram.CheckBatchKeys(keys)
}

// writeHTTPError answers a request that never reached the MCP handler
// (a failed authentication, a refused body) with the status of the one
// code→status table and the REST API's error body; internal errors are
// logged in full.
func (s *Server) writeHTTPError(w http.ResponseWriter, err error) {
	status, code := wire.Status(err)
	switch {
	case status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="engram"`)
	case code == engram.EINTERNAL:
		s.cfg.Logger.Error("mcp: request", "err", err, "request_id", w.Header().Get("X-Request-ID"))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(wire.ErrorBody(err))
}

// minLevel drops records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}

// ReaderOf is who reads through key: its clearance (engram.DefaultClearance
// when it has none), masker and tenant's withhold mode.
func ReaderOf(key *engram.APIKey) *engram.Reader {
	r := &engram.Reader{Clearance: key.Clearance, MaskPII: key.MaskPII, Withhold: key.Withhold, Gate: key.Gate, GateMode: key.GateMode}
	if r.Clearance == "" {
		r.Clearance = engram.DefaultClearance
	}
	return r
}
