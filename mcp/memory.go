package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/gate"
	"github.com/engram-memory/engram/internal/wire"
)

// memoryView is a memory as the tools return it: what a model needs to
// read and cite it, without the scorer's bookkeeping (GET
// /v1/memories/{id} has every field).
type memoryView struct {
	ID            string     `json:"id"`
	Key           string     `json:"key,omitempty"`
	AgentID       string     `json:"agent_id,omitempty"`
	Category      string     `json:"category"`
	Type          string     `json:"type,omitempty"`
	Tags          []string   `json:"tags"`
	Content       string     `json:"content"`
	Summary       string     `json:"summary,omitempty"`
	Priority      string     `json:"priority"`
	Importance    float64    `json:"importance"`
	Confidence    float64    `json:"confidence"`
	Emotion       float64    `json:"emotion" jsonschema:"emotional intensity from 0 to 1"`
	Reward        float64    `json:"reward" jsonschema:"learned from feedback, from -1 to 1"`
	UpCount       int64      `json:"up_count"`
	DownCount     int64      `json:"down_count"`
	NeedsRevision bool       `json:"needs_revision"`
	Quarantined   bool       `json:"quarantined,omitempty" jsonschema:"held back by the write gate: stored, but never recalled until released"`
	Valid         bool       `json:"valid" jsonschema:"false once forgotten"`
	ExpiresAt     *time.Time `json:"expires_at,omitempty"`
	UpdatedAt     time.Time  `json:"updated_at"`
	Version       int64      `json:"version"`
}

func viewOf(m *engram.Memory) memoryView {
	tags := m.Tags
	if tags == nil {
		tags = []string{}
	}
	return memoryView{ID: m.ID, Key: m.Key, AgentID: m.AgentID, Category: m.Category, Type: m.Type, Tags: tags,
		Content: m.Content, Summary: m.Summary, Priority: string(m.Priority), Importance: m.Importance,
		Confidence: m.Confidence, Emotion: engram.EmotionOf(m), Reward: m.Reward, UpCount: m.UpCount, DownCount: m.DownCount,
		NeedsRevision: m.NeedsRevision, Quarantined: m.Quarantined, Valid: m.Valid, ExpiresAt: m.ExpiresAt, UpdatedAt: m.UpdatedAt, Version: m.Version}
}

// rememberArgs create a memory, or, with an id, change the fields given.
type rememberArgs struct {
	UserID     string           `json:"user_id,omitempty" jsonschema:"the end user this call is for: their memories and the shared ones; omit for shared only"`
	ID         string           `json:"id,omitempty" jsonschema:"id of a memory to change; omit to store a new one"`
	Content    *string          `json:"content,omitempty" jsonschema:"the memory: one self-contained statement, in the user's language; required for a new memory"`
	Category   *string          `json:"category,omitempty" jsonschema:"domain: work, life, preference, emotion, strategy (what worked or failed) or kb (external knowledge)"`
	Tags       *[]string        `json:"tags,omitempty" jsonschema:"short labels to find it by"`
	Summary    *string          `json:"summary,omitempty" jsonschema:"a shorter form, used when the full text does not fit a budget"`
	Type       *string          `json:"type,omitempty" jsonschema:"free label such as fact, decision or lesson"`
	Importance *float64         `json:"importance,omitempty" jsonschema:"0 to 1; default 0.5"`
	Priority   *engram.Priority `json:"priority,omitempty" jsonschema:"P0 identity, always injected and never fades; P1 years; P2 months (default); P3 weeks"`
	Emotion    *float64         `json:"emotion,omitempty" jsonschema:"how strongly felt it is, 0 to 1: kept longer and ranked first among equals; omit to estimate it from the text"`
	AgentID    *string          `json:"agent_id,omitempty" jsonschema:"makes the memory private to this agent; omit to share it with every agent of the tenant"`
	Source     json.RawMessage  `json:"source,omitempty" jsonschema:"where it came from: a string such as \"chat\", or {kind, name, retrieved_at, locator} for web, tool or file content"`
	ExpiresAt  json.RawMessage  `json:"expires_at,omitempty" jsonschema:"RFC 3339 time after which it is never recalled"`
}

// gate is the write gate policy of memory.gate and memory.gate_mode.
func (s *Server) gate() gate.Policy { return gate.Policy{On: s.cfg.Gate, Mode: s.cfg.GateMode} }

type rememberResult struct {
	Memory memoryView `json:"memory"`
	// Created is false when the memory was changed, or when the same
	// content already existed (Deduplicated).
	Created      bool `json:"created"`
	Deduplicated bool `json:"deduplicated" jsonschema:"the same content was already stored in that category; that memory is returned"`
}

func (b *toolbox) addRemember() {
	addTool(b, &sdk.Tool{
		Name: "remember",
		Description: "Store something worth keeping in long-term memory: a fact about the user, a preference, a decision, " +
			"a lesson from a task. Use it when the user tells you something durable or a task teaches you something. " +
			"One self-contained statement per memory. Identical content is stored once. To correct a memory, pass its id " +
			"and the fields to change. For a value with a name that you will overwrite, use set_memory instead.",
		Annotations: &sdk.ToolAnnotations{Title: "Remember", DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		enum(s, "category", b.s.cfg.Categories...)
		enum(s, "priority", "P0", "P1", "P2", "P3")
		between(s, "importance", 0, 1)
		between(s, "emotion", 0, 1)
		s.Properties["source"].Types = []string{"string", "object"}
		s.Properties["expires_at"].Type, s.Properties["expires_at"].Format = "string", "date-time"
	}, b.s.remember)
}

func (s *Server) remember(ctx context.Context, a *rememberArgs) (*rememberResult, error) {
	expires, err := wire.ParseTime("expires_at", a.ExpiresAt)
	if err != nil {
		return nil, err
	}
	source := nullToEmpty(a.Source)
	if a.ID != "" {
		u := engram.MemoryUpdate{Content: a.Content, Category: a.Category, Tags: a.Tags, Summary: a.Summary, Type: a.Type,
			Importance: a.Importance, Priority: a.Priority, Emotion: a.Emotion, AgentID: a.AgentID, ExpiresAt: expires}
		if source != nil {
			u.Source = &source
		}
		if u == (engram.MemoryUpdate{}) {
			return nil, engram.Errorf(engram.EINVALID, "give the fields to change along with the id")
		}
		m, err := s.cfg.Memories.UpdateMemory(ctx, a.ID, u)
		if err != nil {
			return nil, err
		}
		return &rememberResult{Memory: viewOf(m)}, nil
	}
	m := &engram.Memory{Source: source, ExpiresAt: expires, Emotion: a.Emotion}
	set(&m.Content, a.Content)
	set(&m.Category, a.Category)
	set(&m.Tags, a.Tags)
	set(&m.Summary, a.Summary)
	set(&m.Type, a.Type)
	set(&m.Importance, a.Importance)
	set(&m.Priority, a.Priority)
	set(&m.AgentID, a.AgentID)
	if err := s.gate().Apply(ctx, s.cfg.Memories, m, nil); err != nil {
		return nil, err
	}
	res, err := s.cfg.Memories.CreateMemory(ctx, m)
	if err != nil {
		return nil, err
	}
	return &rememberResult{Memory: viewOf(res.Memory), Created: !res.Deduplicated, Deduplicated: res.Deduplicated}, nil
}

// setMemoryArgs are set_memory(key, content, source) with the optional
// metadata of PUT /v1/keys/{key}.
type setMemoryArgs struct {
	UserID     string           `json:"user_id,omitempty" jsonschema:"the end user this call is for: their memories and the shared ones; omit for shared only"`
	Key        string           `json:"key" jsonschema:"a path such as /user/preference/style: segments separated by /, starting with /"`
	Content    json.RawMessage  `json:"content" jsonschema:"the value: a string, or any JSON (an object's text, content or value field is what is recalled); null deletes the key"`
	Source     json.RawMessage  `json:"source" jsonschema:"where the value came from: a string such as \"chat\", or {kind, name, retrieved_at, locator}, required for /kb/ keys and web, tool or file sources"`
	Category   *string          `json:"category,omitempty" jsonschema:"default: the first path segment that names a category, else life"`
	Tags       *[]string        `json:"tags,omitempty"`
	Type       *string          `json:"type,omitempty"`
	Summary    *string          `json:"summary,omitempty"`
	Importance *float64         `json:"importance,omitempty"`
	Priority   *engram.Priority `json:"priority,omitempty"`
	AgentID    *string          `json:"agent_id,omitempty"`
	ExpiresAt  json.RawMessage  `json:"expires_at,omitempty" jsonschema:"RFC 3339 time after which the key reads as gone"`
}

type setMemoryResult struct {
	Memory  memoryView `json:"memory"`
	Deleted bool       `json:"deleted" jsonschema:"content was null: the key is deleted"`
}

func (b *toolbox) addSetMemory() {
	addTool(b, &sdk.Tool{
		Name: "set_memory",
		Description: "Set the value at a key, a path such as /user/preference/style or /project/acme/deadline. " +
			"The last write wins and content null deletes the key. Use it for things that have one current value " +
			"(a name, a setting, a standing instruction), so that a change replaces the old value instead of adding " +
			"a second memory. A path segment naming a category (work, life, preference, emotion, strategy, kb) files it there.",
		Annotations: &sdk.ToolAnnotations{Title: "Set memory at a key", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, func(s *jsonschema.Schema) {
		enum(s, "category", b.s.cfg.Categories...)
		enum(s, "priority", "P0", "P1", "P2", "P3")
		between(s, "importance", 0, 1)
		s.Properties["source"].Types = []string{"string", "object"}
		s.Properties["expires_at"].Type, s.Properties["expires_at"].Format = "string", "date-time"
	}, b.s.setMemory)
}

func (s *Server) setMemory(ctx context.Context, a *setMemoryArgs) (*setMemoryResult, error) {
	key, err := engram.NormalizeKey(a.Key, s.cfg.Limits.Keys)
	if err != nil {
		return nil, err
	}
	if a.Content == nil {
		return nil, engram.Errorf(engram.EINVALID, "content is required (JSON null tombstones the key)")
	}
	expires, err := wire.ParseTime("expires_at", a.ExpiresAt)
	if err != nil {
		return nil, err
	}
	if gm, ok := gate.KeyMemory(key, engram.UserFromContext(ctx), a.Content); ok {
		if err := s.gate().Apply(ctx, s.cfg.Memories, gm, nil); err != nil {
			return nil, err
		}
	}
	m, err := s.cfg.Memories.SetKey(ctx, engram.KeyWrite{
		Key: key, Content: a.Content, Source: a.Source, AgentID: a.AgentID, Category: a.Category, Tags: a.Tags,
		Type: a.Type, Summary: a.Summary, Importance: a.Importance, Priority: a.Priority, ExpiresAt: expires,
	})
	if err != nil {
		return nil, err
	}
	return &setMemoryResult{Memory: viewOf(m), Deleted: !m.Valid}, nil
}

type forgetArgs struct {
	UserID string `json:"user_id,omitempty" jsonschema:"the end user this call is for: their memories and the shared ones; omit for shared only"`
	ID     string `json:"id,omitempty" jsonschema:"id of the memory to forget"`
	Key    string `json:"key,omitempty" jsonschema:"or the key whose value to forget"`
}

type forgetResult struct {
	Memory memoryView `json:"memory"`
}

// forgetSource is the source of the write that deletes key. A tombstone
// keeps no source, but every key write must carry one that meets its
// key's provenance rule, and /kb/ keys need the full trail.
func forgetSource(key string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"kind": "mcp", "name": "forget",
		"retrieved_at": time.Now().UTC().Format(time.RFC3339), "locator": key})
	return b
}

func (b *toolbox) addForget() {
	addTool(b, &sdk.Tool{
		Name: "forget",
		Description: "Forget a memory, by id or by key. Use it when the user asks you to forget something, or a memory is " +
			"wrong and no correction applies. It is never recalled again; its history is kept.",
		Annotations: &sdk.ToolAnnotations{Title: "Forget", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, nil, b.s.forget)
}

func (s *Server) forget(ctx context.Context, a *forgetArgs) (*forgetResult, error) {
	var m *engram.Memory
	var err error
	switch {
	case (a.ID == "") == (a.Key == ""):
		return nil, engram.Errorf(engram.EINVALID, "give exactly one of id, key")
	case a.ID != "":
		m, err = s.cfg.Memories.DeleteMemory(ctx, a.ID, nil)
	default:
		var key string
		if key, err = engram.NormalizeKey(a.Key, s.cfg.Limits.Keys); err == nil {
			m, err = s.cfg.Memories.SetKey(ctx, engram.KeyWrite{Key: key, Content: json.RawMessage("null"), Source: forgetSource(key)})
		}
	}
	if err != nil {
		return nil, err
	}
	return &forgetResult{Memory: viewOf(m)}, nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func nullToEmpty(b json.RawMessage) json.RawMessage {
	if string(b) == "null" {
		return nil
	}
	return b
}
