package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

// ReadBody reads r's body, at most limit bytes: ETOOLARGE (413) past the
// limit, whether Content-Length announced it or the body ran over;
// EINVALID when the body cannot be read. w may be nil (no connection to
// close early).
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, TooLarge(limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, TooLarge(limit)
		}
		return nil, engram.Errorf(engram.EINVALID, "could not read the request body")
	}
	return body, nil
}

// TooLarge is the refusal of a body over limit bytes.
func TooLarge(limit int64) error {
	return engram.Errorf(engram.ETOOLARGE, "request body is larger than %d bytes", limit)
}

// Decode reads body, one JSON object, into dst, refusing (EINVALID, with a
// message naming the field) what encoding/json would accept or quietly
// change: an empty body, invalid UTF-8, nesting deeper than maxDepth, NUL
// or a lone UTF-16 surrogate in a string, a field named twice (anywhere,
// free JSON such as data included), a field spelt in another case,
// an unknown field, a wrong type, and data after the object. Last, the
// session, resource and agent ids anywhere in dst (fields named
// session_id, resource_id or agent_id) must pass engram.CheckID.
func Decode(body []byte, dst any, maxDepth int) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return engram.Errorf(engram.EINVALID, "request body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return notUTF8()
	}
	if err := checkJSON(body, maxDepth); err != nil {
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
		return trailing()
	}
	return checkIDs(reflect.ValueOf(dst), "")
}

// CheckDocument checks a body that is kept as JSON rather than decoded
// into a type (a JSON Merge Patch, a session's state document) with the
// rules of Decode that apply to free JSON: valid UTF-8, depth, NUL, lone
// surrogates, valid JSON, and no object naming a field twice, at any
// depth. A patch naming a field twice would leave the winner to the
// parser; it is refused instead.
func CheckDocument(body []byte, maxDepth int) error {
	if !utf8.Valid(body) {
		return notUTF8()
	}
	if err := checkJSON(body, maxDepth); err != nil {
		return err
	}
	if !json.Valid(body) {
		return engram.Errorf(engram.EINVALID, "request body is not valid JSON")
	}
	return checkFields(body, nil)
}

// CheckEnvelope checks a body that another parser reads (the MCP SDK's
// JSON-RPC reader): valid UTF-8 and one JSON value with nothing after it,
// with Decode's messages. What the envelope carries (tool arguments) is
// checked by Decode where it is decoded. Malformed JSON is left to the
// parser, which answers it in its protocol's terms.
func CheckEnvelope(body []byte) error {
	if !utf8.Valid(body) {
		return notUTF8()
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return trailing()
	}
	return nil
}

func notUTF8() error {
	return engram.Errorf(engram.EINVALID, "request body is not valid UTF-8")
}

func trailing() error {
	return engram.Errorf(engram.EINVALID, "request body has data after the JSON object")
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

// ParseTime reads an optional RFC 3339 time field kept raw by a request
// type (so that the message can name it); absent or null is nil.
func ParseTime(name string, raw json.RawMessage) (*time.Time, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var t time.Time
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "%s: want an RFC 3339 time such as 2030-01-02T15:04:05Z", name)
	}
	return &t, nil
}
