package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// decodeArgs reads a tool call's arguments into dst with the rules of the
// REST API's JSON bodies, and the same messages (server/json.go), so that
// one mistake reads alike through either door: arguments over the size
// limit (too_large), invalid UTF-8, nesting deeper than the limit, NUL in
// a string, unknown fields, wrong types or trailing data (invalid).
// Absent arguments are an empty object.
func (s *Server) decodeArgs(raw json.RawMessage, dst any) error {
	if int64(len(raw)) > s.cfg.Limits.MaxArgumentBytes {
		return engram.Errorf(engram.ETOOLARGE, "arguments are larger than %d bytes", s.cfg.Limits.MaxArgumentBytes)
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	if !utf8.Valid(raw) {
		return engram.Errorf(engram.EINVALID, "arguments are not valid UTF-8")
	}
	if err := checkJSON(raw, s.cfg.Limits.MaxJSONDepth); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return engram.Errorf(engram.EINVALID, "arguments have data after the JSON object")
	}
	return nil
}

// checkJSON rejects, without building it, JSON nested deeper than max and
// strings holding NUL (\u0000), which PostgreSQL cannot store in text.
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
		if typeErr.Field == "" {
			return engram.Errorf(engram.EINVALID, "arguments must be a JSON object")
		}
		return engram.Errorf(engram.EINVALID, "%s: want %s, got %s", typeErr.Field, jsonKind(typeErr.Type.String()), typeErr.Value)
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

// parseTime reads an optional RFC 3339 time; absent or null is nil.
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
