package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
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

// checkJSON rejects, without building it, JSON nested deeper than max
// and strings holding NUL (\u0000): PostgreSQL cannot store NUL in text,
// and no memory needs it, so both engines refuse it alike.
func checkJSON(b []byte, max int) error {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		switch {
		case inString && ch == '\\':
			if i+5 < len(b) && b[i+1] == 'u' && string(b[i+2:i+6]) == "0000" {
				return engram.Errorf(engram.EINVALID, "strings must not contain NUL (\\u0000)")
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

// queryParams checks that every query parameter is known and given once,
// so that a misspelt filter is an error rather than silently ignored.
func queryParams(c *gin.Context, known ...string) error {
	for name, vals := range c.Request.URL.Query() {
		ok := false
		for _, k := range known {
			ok = ok || k == name
		}
		if !ok {
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
