// Package openapitest holds engram's OpenAPI document to what the server
// really answers, for tests: it finds the operation of a request in the
// document, and validates the response's body against the schema the
// document gives for its status and media type (JSON Schema 2020-12, as
// OpenAPI 3.1 uses it).
package openapitest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docURL names the document inside the schema compiler.
const docURL = "engram:openapi.json"

// Methods are the HTTP methods an OpenAPI path item may hold, lower case.
var Methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Document is a parsed OpenAPI 3.1 document with its schemas compiled.
type Document struct {
	Raw      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
}

// Parse reads doc and compiles every schema under components/schemas, so
// a schema that is not valid JSON Schema fails here.
func Parse(doc []byte) (*Document, error) {
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("openapitest: the document is not JSON: %w", err)
	}
	root, ok := raw.(map[string]any)
	if !ok || root["openapi"] != "3.1.0" {
		return nil, fmt.Errorf("openapitest: not an OpenAPI 3.1.0 document")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, raw); err != nil {
		return nil, fmt.Errorf("openapitest: %w", err)
	}
	d := &Document{Raw: root, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	components, _ := root["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	for name := range schemas {
		if _, err := d.schema("#/components/schemas/" + name); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (d *Document) schema(pointer string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.schemas[pointer]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile(docURL + pointer)
	if err != nil {
		return nil, fmt.Errorf("openapitest: schema %s: %w", pointer, err)
	}
	d.schemas[pointer] = s
	return s, nil
}

// CheckExamples validates the example of every component schema that
// has one against that schema, so the examples a reader copies work.
func (d *Document) CheckExamples() error {
	var errs []error
	components, _ := d.Raw["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	for _, name := range keys(schemas) {
		ex, ok := schemas[name].(map[string]any)["example"]
		if !ok {
			continue
		}
		sch, err := d.schema("#/components/schemas/" + name)
		if err == nil {
			err = sch.Validate(ex)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("the example of %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Operation is one method on one path of the document.
type Operation struct {
	Method string // upper case
	Path   string // as in the document: /v1/memories/{id}
}

func (o Operation) String() string { return o.Method + " " + o.Path }

// Operations lists every operation of the document, sorted.
func (d *Document) Operations() []Operation {
	var ops []Operation
	paths, _ := d.Raw["paths"].(map[string]any)
	for path, item := range paths {
		item, _ := item.(map[string]any)
		for _, m := range Methods {
			if _, ok := item[m]; ok {
				ops = append(ops, Operation{strings.ToUpper(m), path})
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].String() < ops[j].String() })
	return ops
}

// Has reports whether the document holds method on path.
func (d *Document) Has(method, path string) bool {
	_, ok := d.operation(Operation{strings.ToUpper(method), path})
	return ok
}

func (d *Document) operation(op Operation) (map[string]any, bool) {
	paths, _ := d.Raw["paths"].(map[string]any)
	item, _ := paths[op.Path].(map[string]any)
	o, ok := item[strings.ToLower(op.Method)].(map[string]any)
	return o, ok
}

// Match finds the documented operation of a request path: a {param}
// matches one segment, except {key} and {alias}, engram's key paths,
// which match the rest of the path.
func (d *Document) Match(method, urlPath string) (Operation, bool) {
	segs := strings.Split(strings.Trim(urlPath, "/"), "/")
	for _, op := range d.Operations() {
		if op.Method != strings.ToUpper(method) {
			continue
		}
		if matchPath(strings.Split(strings.Trim(op.Path, "/"), "/"), segs) {
			return op, true
		}
	}
	return Operation{}, false
}

func matchPath(pattern, segs []string) bool {
	for i, p := range pattern {
		if (p == "{key}" || p == "{alias}") && i == len(pattern)-1 {
			return len(segs) > i
		}
		if i >= len(segs) {
			return false
		}
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if p != segs[i] {
			return false
		}
	}
	return len(pattern) == len(segs)
}

// Check validates one response of op against the document: its status
// must be documented (or fall to "default"), its media type too, and
// its body must satisfy the schema (every line of a JSON Lines body).
func (d *Document) Check(op Operation, status int, contentType string, body []byte) error {
	o, ok := d.operation(op)
	if !ok {
		return fmt.Errorf("%s is not in the document", op)
	}
	responses, _ := o["responses"].(map[string]any)
	resp, ok := responses[strconv.Itoa(status)]
	if !ok {
		if resp, ok = responses["default"]; !ok {
			return fmt.Errorf("%s answered %d, which the document does not list", op, status)
		}
	}
	resp = d.deref(resp)
	content, _ := resp.(map[string]any)["content"].(map[string]any)
	if len(content) == 0 {
		if len(body) != 0 {
			return fmt.Errorf("%s %d: the document gives no body, the server sent %d bytes", op, status, len(body))
		}
		return nil
	}
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("%s %d: Content-Type %q: %w", op, status, contentType, err)
	}
	mt, ok := content[media].(map[string]any)
	if !ok {
		return fmt.Errorf("%s %d: media type %s is not documented (documented: %v)", op, status, media, keys(content))
	}
	sch, err := d.schemaOf(mt["schema"])
	if err != nil {
		return fmt.Errorf("%s %d: %w", op, status, err)
	}
	switch {
	case media == "application/json":
		return validate(sch, op, status, body)
	case media == "application/x-ndjson":
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if err := validate(sch, op, status, sc.Bytes()); err != nil {
				return err
			}
		}
		return sc.Err()
	}
	return nil
}

// CheckRequest validates a request body of op against the document's
// requestBody for its media type: what a client sends by the document
// must be what the server takes, and the other way round.
func (d *Document) CheckRequest(op Operation, contentType string, body []byte) error {
	o, ok := d.operation(op)
	if !ok {
		return fmt.Errorf("%s is not in the document", op)
	}
	rb, ok := o["requestBody"]
	if !ok {
		if len(body) != 0 {
			return fmt.Errorf("%s: the document gives no request body, the test sent one", op)
		}
		return nil
	}
	if len(body) == 0 {
		if required, _ := d.deref(rb).(map[string]any)["required"].(bool); required {
			return fmt.Errorf("%s: the document requires a request body", op)
		}
		return nil
	}
	content, _ := d.deref(rb).(map[string]any)["content"].(map[string]any)
	media, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("%s request: Content-Type %q: %w", op, contentType, err)
	}
	mt, ok := content[media].(map[string]any)
	if !ok {
		return fmt.Errorf("%s request: media type %s is not documented (documented: %v)", op, media, keys(content))
	}
	if media != "application/json" && media != "application/merge-patch+json" {
		return nil
	}
	sch, err := d.schemaOf(mt["schema"])
	if err != nil {
		return fmt.Errorf("%s request: %w", op, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s request: the body is not JSON: %w", op, err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("%s request: the body does not match the document: %v\nbody: %.600s", op, err, body)
	}
	return nil
}

// schemaOf compiles an inline schema or the component it refers to.
func (d *Document) schemaOf(s any) (*jsonschema.Schema, error) {
	m, _ := s.(map[string]any)
	if ref, ok := m["$ref"].(string); ok && len(m) == 1 {
		return d.schema(ref)
	}
	// An inline schema: give it a place of its own in the compiler.
	d.mu.Lock()
	defer d.mu.Unlock()
	url := fmt.Sprintf("engram:inline/%d.json", len(d.schemas))
	if err := d.compiler.AddResource(url, withDefs(m, d.Raw)); err != nil {
		return nil, err
	}
	sch, err := d.compiler.Compile(url)
	if err == nil {
		d.schemas[url] = sch
	}
	return sch, err
}

// withDefs lets an inline schema's #/components/... references resolve
// by carrying the document's components beside it.
func withDefs(s map[string]any, root map[string]any) map[string]any {
	out := map[string]any{"components": root["components"]}
	for k, v := range s {
		out[k] = v
	}
	return out
}

func (d *Document) deref(v any) any {
	m, _ := v.(map[string]any)
	ref, ok := m["$ref"].(string)
	if !ok {
		return v
	}
	var cur any = d.Raw
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		cur = cur.(map[string]any)[part]
	}
	return cur
}

func validate(sch *jsonschema.Schema, op Operation, status int, body []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s %d: the body is not JSON: %w", op, status, err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("%s %d: the body does not match the document: %v\nbody: %.600s", op, status, err, body)
	}
	return nil
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Transport validates every request and response that passes through it
// against the document and records which operations were seen with which
// statuses. What the document does not describe is recorded in Errors
// (a request the server refused is checked only for its response: a
// refusal is the server's answer to what the document does not allow);
// bodies are handed on unchanged.
type Transport struct {
	Doc  *Document
	Base http.RoundTripper

	mu     sync.Mutex
	Seen   map[Operation][]int
	Errors []error
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	var sent []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		sent = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Seen == nil {
		t.Seen = map[Operation][]int{}
	}
	op, ok := t.Doc.Match(req.Method, req.URL.EscapedPath())
	if !ok {
		t.Errors = append(t.Errors, fmt.Errorf("%s %s matches no operation of the document", req.Method, req.URL.Path))
		return resp, nil
	}
	t.Seen[op] = append(t.Seen[op], resp.StatusCode)
	if resp.StatusCode < 400 {
		// A request the server took must be one the document allows.
		if err := t.Doc.CheckRequest(op, req.Header.Get("Content-Type"), sent); err != nil {
			t.Errors = append(t.Errors, err)
		}
	}
	if err := t.Doc.Check(op, resp.StatusCode, resp.Header.Get("Content-Type"), body); err != nil {
		t.Errors = append(t.Errors, err)
	}
	return resp, nil
}
