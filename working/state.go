package working

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/engram-memory/engram"
)

// A session's working state is a JSON object; so is its resource's. A
// schema, when set, is a JSON Schema (draft 2020-12 unless it names
// another) that every later document must pass; a document that fails is
// refused with EUNPROCESSABLE naming the schema keyword and the document
// location, and nothing is written. Schemas may not load anything: a
// "$ref" to a URL or a file is refused when the schema is set.

// scopeOf returns the scope id of a session's document: the session id,
// or its resource id.
func (s *Service) scopeOf(ctx context.Context, sessionID, scope string) (string, error) {
	if err := engram.CheckID("session id", sessionID); err != nil {
		return "", err
	}
	switch scope {
	case "", engram.ScopeSession:
		return sessionID, nil
	case engram.ScopeResource:
		sess, err := s.store.FindSession(ctx, sessionID)
		if err != nil {
			return "", err
		}
		if sess.ResourceID == "" {
			return "", engram.Errorf(engram.EINVALID, "session %s has no resource_id", sessionID)
		}
		return sess.ResourceID, nil
	}
	return "", engram.Errorf(engram.EINVALID, "scope must be session or resource")
}

func scopeName(scope string) string {
	if scope == "" {
		return engram.ScopeSession
	}
	return scope
}

// State implements engram.SessionService: a document never set reads as
// {} at version 0.
func (s *Service) State(ctx context.Context, sessionID, scope string) (*engram.WorkingState, error) {
	id, err := s.scopeOf(ctx, sessionID, scope)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.FindSession(ctx, sessionID); err != nil {
		return nil, err
	}
	st, err := s.store.FindWorkingState(ctx, scopeName(scope), id)
	if engram.ErrorCode(err) == engram.ENOTFOUND {
		return &engram.WorkingState{Scope: scopeName(scope), ScopeID: id, State: json.RawMessage("{}")}, nil
	}
	return st, err
}

// PutState implements engram.SessionService. A nil schema keeps the
// stored one; JSON null removes it.
func (s *Service) PutState(ctx context.Context, sessionID, scope string, state, schema json.RawMessage) (*engram.WorkingState, error) {
	id, err := s.scopeOf(ctx, sessionID, scope)
	if err != nil {
		return nil, err
	}
	doc, err := decodeObject("state", state)
	if err != nil {
		return nil, err
	}
	var sch *jsonschema.Schema
	if schema != nil && !bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
		if sch, err = compileSchema(schema); err != nil {
			return nil, err
		}
	}
	return s.store.UpdateWorkingState(ctx, sessionID, scopeName(scope), id, s.cfg.Sessions.TTL, func(cur *engram.WorkingState) (*engram.WorkingState, error) {
		next := &engram.WorkingState{State: compact(state)}
		switch {
		case schema == nil && cur != nil && cur.Schema != nil:
			next.Schema = cur.Schema
			if sch, err = compileSchema(cur.Schema); err != nil {
				return nil, err
			}
		case sch != nil:
			next.Schema = compact(schema)
		}
		if err := validate(sch, doc); err != nil {
			return nil, err
		}
		return next, nil
	})
}

// PatchState implements engram.SessionService: patch is a JSON Merge
// Patch (RFC 7396) of the document ({} when none was set); the result
// must be an object and pass the schema.
func (s *Service) PatchState(ctx context.Context, sessionID, scope string, patch json.RawMessage) (*engram.WorkingState, error) {
	id, err := s.scopeOf(ctx, sessionID, scope)
	if err != nil {
		return nil, err
	}
	p, err := decodeObject("merge patch", patch)
	if err != nil {
		return nil, err
	}
	return s.store.UpdateWorkingState(ctx, sessionID, scopeName(scope), id, s.cfg.Sessions.TTL, func(cur *engram.WorkingState) (*engram.WorkingState, error) {
		var doc any = map[string]any{}
		var next engram.WorkingState
		var sch *jsonschema.Schema
		if cur != nil {
			var err error
			if doc, err = decodeJSON(cur.State); err != nil {
				return nil, fmt.Errorf("working: stored state: %w", err)
			}
			if cur.Schema != nil {
				if sch, err = compileSchema(cur.Schema); err != nil {
					return nil, err
				}
				next.Schema = cur.Schema
			}
		}
		doc = MergePatch(doc, p)
		if err := validate(sch, doc); err != nil {
			return nil, err
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("working: encode state: %w", err)
		}
		next.State = b
		return &next, nil
	})
}

// MergePatch applies an RFC 7396 JSON Merge Patch to target and returns
// the result: an object patch merges member by member (null removes a
// member), anything else replaces the target.
func MergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = MergePatch(t[k], v)
	}
	return t
}

// decodeJSON decodes raw keeping numbers exact.
func decodeJSON(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func decodeObject(name string, raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, engram.Errorf(engram.EINVALID, "%s is required and must be a JSON object", name)
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "%s is not valid JSON", name)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, engram.Errorf(engram.EINVALID, "%s must be a JSON object", name)
	}
	return m, nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// schemaURL is the name a session's schema is compiled under.
const schemaURL = "engram:state-schema.json"

// noLoader refuses every URL a schema refers to: a schema is the
// client's, and must not make the server read files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: schemas may not refer to other documents", url)
}

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "schema is not valid JSON")
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, engram.Errorf(engram.EINVALID, "schema must be a JSON object")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "schema: %s", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "schema is not a valid JSON Schema: %s", strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return sch, nil
}

// validate checks doc against sch (nil passes everything). A failure is
// EUNPROCESSABLE naming the first failing keyword's schema path and the
// document location it applies to.
func validate(sch *jsonschema.Schema, doc any) error {
	if sch == nil {
		return nil
	}
	err := sch.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return engram.Errorf(engram.EUNPROCESSABLE, "state fails its schema")
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	path := "#"
	if i := strings.Index(ve.SchemaURL, "#"); i >= 0 {
		path = ve.SchemaURL[i:]
	}
	if kw := ve.ErrorKind.KeywordPath(); len(kw) > 0 {
		path = strings.TrimSuffix(path, "/") + "/" + strings.Join(kw, "/")
	}
	at := "/" + strings.Join(ve.InstanceLocation, "/")
	msg := strings.TrimPrefix(ve.Error(), "jsonschema validation failed with '"+ve.SchemaURL+"'\n")
	return engram.Errorf(engram.EUNPROCESSABLE, "state fails its schema at %s (document %s): %s", path, at, fold(msg))
}
