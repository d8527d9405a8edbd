package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

// decodeJSON reads the request body into dst, refusing with a clear 4xx,
// before anything is written: a non-JSON content type (415), a body over
// the limit (413), invalid UTF-8, nesting deeper than the limit, unknown
// fields, wrong types, trailing data or an empty body (400).
func (s *Server) decodeJSON(c *gin.Context, dst any) error {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "application/json" {
		return engram.Errorf(engram.EUNSUPPORTED, "Content-Type must be application/json")
	}
	limit := s.cfg.Limits.MaxBodyBytes
	if c.Request.ContentLength > limit {
		return tooLarge(limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(limit)
		}
		return engram.Errorf(engram.EINVALID, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return engram.Errorf(engram.EINVALID, "request body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return engram.Errorf(engram.EINVALID, "request body is not valid UTF-8")
	}
	if err := checkJSON(body, s.cfg.Limits.MaxJSONDepth); err != nil {
		return err
	}
	if err := checkFields(body, reflect.TypeOf(dst)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return engram.Errorf(engram.EINVALID, "request body has data after the JSON object")
	}
	return nil
}

func tooLarge(limit int64) error {
	return engram.Errorf(engram.ETOOLARGE, "request body is larger than %d bytes", limit)
}

// checkJSON rejects, without building it, JSON nested deeper than max,
// strings holding NUL (\u0000): PostgreSQL cannot store NUL in text, and
// no memory needs it, so both engines refuse it alike; and lone UTF-16
// surrogates (\ud800 not followed by \udc00–\udfff, or a low one alone),
// which encoding/json would silently store as U+FFFD.
func checkJSON(b []byte, max int) error {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch {
		case inString && ch == '\\':
			if i+5 < len(b) && b[i+1] == 'u' {
				r, ok := hex4(b[i+2 : i+6])
				switch {
				case ok && r == 0:
					return engram.Errorf(engram.EINVALID, "strings must not contain NUL (\\u0000)")
				case ok && r >= 0xd800 && r < 0xdc00:
					if i+11 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
						return loneSurrogate(r)
					}
					if lo, ok := hex4(b[i+8 : i+12]); !ok || lo < 0xdc00 || lo > 0xdfff {
						return loneSurrogate(r)
					}
					i += 6 // the low half is checked here
				case ok && r >= 0xdc00 && r <= 0xdfff:
					return loneSurrogate(r)
				}
			}
			i++ // skip the escaped character
		case ch == '"':
			inString = !inString
		case inString:
		case ch == '{' || ch == '[':
			if depth++; depth > max {
				return engram.Errorf(engram.EINVALID, "JSON is nested deeper than %d levels", max)
			}
		case ch == '}' || ch == ']':
			depth--
		}
	}
	return nil
}

func hex4(b []byte) (rune, bool) {
	v, err := strconv.ParseUint(string(b), 16, 16)
	return rune(v), err == nil
}

func loneSurrogate(r rune) error {
	return engram.Errorf(engram.EINVALID, "strings must not contain a lone UTF-16 surrogate (\\u%04x); escape a character outside the BMP as a surrogate pair", r)
}

// checkFields refuses what encoding/json would quietly accept: an object
// naming a field twice (anywhere, also inside free JSON such as data),
// and a field of the request spelt in another case ("Content"), which the
// decoder would match to content. t is the type decoded into.
func checkFields(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := walkFields(dec, t); err != nil {
		var e *engram.Error
		if errors.As(err, &e) {
			return e
		}
		return nil // malformed JSON: the decoder reports it
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// walkFields reads one JSON value from dec, checking the objects in it
// against t (nil: free JSON, checked for duplicates only).
func walkFields(dec *json.Decoder, t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil // free JSON, or a type that reads itself
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkFields(dec, elem); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := tok.(string)
			if seen[name] {
				return engram.Errorf(engram.EINVALID, "duplicate field %q", name)
			}
			seen[name] = true
			var ft reflect.Type
			switch {
			case t == nil:
			case t.Kind() == reflect.Map:
				ft = t.Elem()
			case t.Kind() == reflect.Struct:
				f, exact, ok := jsonField(t, name)
				if ok && !exact {
					return engram.Errorf(engram.EINVALID, "unknown field %q (field names are case-sensitive: %q)", name, f)
				}
				if ok {
					ft = fieldType(t, f)
				}
			}
			if err := walkFields(dec, ft); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// jsonField finds the JSON field of struct t named name: its exact
// name, whether name matched exactly, and whether any field matched
// (case-insensitively, as encoding/json matches).
func jsonField(t reflect.Type, name string) (string, bool, bool) {
	folded := ""
	for _, f := range jsonFields(t) {
		if f == name {
			return f, true, true
		}
		if folded == "" && strings.EqualFold(f, name) {
			folded = f
		}
	}
	return folded, false, folded != ""
}

// jsonFields lists the JSON names of struct t's fields, embedded structs'
// fields included.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// fieldType is the Go type of struct t's JSON field name.
func fieldType(t reflect.Type, name string) reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if inner := fieldType(ft, name); inner != nil {
					return inner
				}
				continue
			}
		}
		if tag == name || (tag == "" && f.Name == name) {
			return f.Type
		}
	}
	return nil
}

// jsonError turns a decoder error into a message naming the field.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return engram.Errorf(engram.EINVALID, "request body must be a JSON object")
		}
		return engram.Errorf(engram.EINVALID, "%s: want %s, got %s", field, jsonKind(typeErr.Type.String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return engram.Errorf(engram.EINVALID, "malformed JSON at byte %d", syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return engram.Errorf(engram.EINVALID, "malformed JSON: unexpected end")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return engram.Errorf(engram.EINVALID, "unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	var e *engram.Error
	if errors.As(err, &e) {
		return e
	}
	return engram.Errorf(engram.EINVALID, "invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func jsonKind(goType string) string {
	switch {
	case strings.Contains(goType, "float"), strings.Contains(goType, "int"):
		return "a number"
	case strings.Contains(goType, "[]string"):
		return "an array of strings"
	case strings.Contains(goType, "string"), strings.Contains(goType, "Priority"):
		return "a string"
	case strings.Contains(goType, "bool"):
		return "true or false"
	case strings.Contains(goType, "Time"):
		return "an RFC 3339 time"
	}
	return goType
}

// parseTime reads an optional RFC 3339 time field; absent or null is nil.
func parseTime(name string, raw json.RawMessage) (*time.Time, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var t time.Time
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "%s: want an RFC 3339 time such as 2030-01-02T15:04:05Z", name)
	}
	return &t, nil
}

// ifMatch reads the expected version from If-Match ("3", W/"3" or 3).
func ifMatch(c *gin.Context) (*int64, error) {
	h := strings.TrimSpace(c.GetHeader("If-Match"))
	if h == "" {
		return nil, nil
	}
	v, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(h, "W/"), `"`), 10, 64)
	if err != nil || v < 1 {
		return nil, engram.Errorf(engram.EINVALID, "If-Match must be a memory version such as \"3\"")
	}
	return &v, nil
}

func setETag(c *gin.Context, version int64) {
	c.Header("ETag", fmt.Sprintf("%q", strconv.FormatInt(version, 10)))
}

// strictQuery refuses a query string that does not parse (a stray %),
// which the handlers would otherwise read as if the broken pair were not
// there, and any query parameter on an endpoint that takes none.
func strictQuery(c *gin.Context) {
	if _, err := url.ParseQuery(c.Request.URL.RawQuery); err != nil {
		writeError(c, engram.Errorf(engram.EINVALID, "malformed query string: %s", strings.TrimPrefix(err.Error(), "invalid URL escape ")))
		c.Abort()
		return
	}
	if !takesQuery[c.Request.Method+" "+c.FullPath()] {
		if err := queryParams(c); err != nil {
			writeError(c, err)
			c.Abort()
			return
		}
	}
	c.Next()
}

// takesQuery lists the endpoints that read query parameters; each checks
// its own with queryParams.
var takesQuery = map[string]bool{
	"GET /v1/memories": true, "GET /v1/memories/:id/history": true, "GET /v1/context": true, "GET /v1/boot": true,
	"GET /v1/pairs": true, "GET /v1/reflections": true, "GET /v1/reflections/:id": true,
	"GET /v1/agents/:id/persona": true,
	// Every GET, PUT and PATCH under /v1/sessions checks its own (events:
	// none; context: token_limit; state: scope); its POSTs take none.
	"GET /v1/sessions/*rest": true, "PUT /v1/sessions/*rest": true, "PATCH /v1/sessions/*rest": true,
}

// queryParams checks that every query parameter is known and given once,
// so that a misspelt filter is an error rather than silently ignored.
func queryParams(c *gin.Context, known ...string) error {
	for name, vals := range c.Request.URL.Query() {
		ok := false
		for _, k := range known {
			ok = ok || k == name
		}
		switch {
		case !ok && len(known) == 0:
			return engram.Errorf(engram.EINVALID, "unknown query parameter %q; this endpoint takes none", name)
		case !ok:
			return engram.Errorf(engram.EINVALID, "unknown query parameter %q; known: %s", name, strings.Join(known, ", "))
		}
		if len(vals) > 1 {
			return engram.Errorf(engram.EINVALID, "query parameter %q given more than once", name)
		}
		if strings.ContainsRune(vals[0], 0) || !utf8.ValidString(vals[0]) {
			return engram.Errorf(engram.EINVALID, "query parameter %q must be valid UTF-8 without NUL", name)
		}
	}
	return nil
}

// errStop ends an iteration early without being an error.
var errStop = errors.New("stop")
