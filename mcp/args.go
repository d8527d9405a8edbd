package mcp

import (
	"bytes"
	"encoding/json"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// decodeArgs reads a tool call's arguments into dst with the rules and
// messages of the REST API's JSON bodies (wire.Decode), so that one
// mistake reads alike through either door: arguments over the size limit
// (too_large), invalid UTF-8, nesting deeper than the limit, NUL or a
// lone surrogate in a string, a field named twice or spelt in another
// case, unknown fields, wrong types, or a bad session, resource or agent
// id (invalid). Absent arguments are an empty object.
func (s *Server) decodeArgs(raw json.RawMessage, dst any) error {
	if int64(len(raw)) > s.cfg.Limits.MaxArgumentBytes {
		return engram.Errorf(engram.ETOOLARGE, "arguments are larger than %d bytes", s.cfg.Limits.MaxArgumentBytes)
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	return wire.Decode(raw, dst, s.cfg.Limits.MaxJSONDepth)
}
