package server

import (
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/gate"
	"github.com/engram-memory/engram/internal/wire"
)

// putKeyRequest is the body of PUT /v1/keys/{key}: set_memory(key,
// content, source). "content" is any JSON and is required; null
// tombstones the key. The other fields override the same-named fields of
// a content object.
type putKeyRequest struct {
	Content    json.RawMessage  `json:"content"`
	Source     json.RawMessage  `json:"source"`
	AgentID    *string          `json:"agent_id"`
	UserID     string           `json:"user_id"` // the key of this end user; "" the shared key
	Category   *string          `json:"category"`
	Tags       *[]string        `json:"tags"`
	Type       *string          `json:"type"`
	Summary    *string          `json:"summary"`
	Importance *float64         `json:"importance"`
	Priority   *engram.Priority `json:"priority"`
	Emotion    *float64         `json:"emotion"` // absent: estimated from the text
	ExpiresAt  json.RawMessage  `json:"expires_at"`
	Gate       *bool            `json:"gate"` // hold the write to the write gate (see Server.gated)
}

// keyParam reads the key of the URL from the path as sent (wire.PathKey):
// an encoded slash (%2F) is refused rather than read as a separator, and
// other escapes are decoded before the key is checked, so %2e%2e arrives
// as ".." and is refused.
func (s *Server) keyParam(c *gin.Context) (string, error) {
	return wire.PathKey(c.Request.URL.EscapedPath(), "/v1/keys", s.cfg.Limits.Keys)
}

// keyWriteTarget reads the key and the If-Match version of a key write,
// answering the request itself (ok false) when either is malformed.
func (s *Server) keyWriteTarget(c *gin.Context) (key string, expect *int64, ok bool) {
	key, err := s.keyParam(c)
	if err == nil {
		expect, err = ifMatch(c)
	}
	if err != nil {
		writeError(c, err)
		return "", nil, false
	}
	return key, expect, true
}

func (s *Server) handlePutKey(c *gin.Context) {
	key, expect, ok := s.keyWriteTarget(c)
	if !ok {
		return
	}
	var req putKeyRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	if req.Content == nil {
		writeError(c, engram.Errorf(engram.EINVALID, "content is required (JSON null tombstones the key)"))
		return
	}
	expires, err := parseTime("expires_at", req.ExpiresAt)
	if err != nil {
		writeError(c, err)
		return
	}
	if m, ok := gate.KeyMemory(key, req.UserID, req.Content); ok {
		if err := s.checkGate(c.Request.Context(), m, req.Gate); err != nil {
			writeError(c, err)
			return
		}
	}
	respondMemory(c)(s.cfg.Memories.SetKey(engram.NewContextWithUser(c.Request.Context(), req.UserID), engram.KeyWrite{
		Key: key, Content: req.Content, Source: req.Source, AgentID: req.AgentID, Category: req.Category,
		Tags: req.Tags, Type: req.Type, Summary: req.Summary, Importance: req.Importance, Priority: req.Priority,
		Emotion: req.Emotion, ExpiresAt: expires, ExpectVersion: expect,
	}))
}

func (s *Server) handleGetKey(c *gin.Context) {
	key, err := s.keyParam(c)
	if err == nil {
		err = queryParams(c, "user_id")
	}
	if err != nil {
		writeError(c, err)
		return
	}
	respondMemory(c)(s.cfg.Memories.FindMemoryByKey(userContext(c), key))
}

// handleDeleteKey is set_memory(key, null) for clients that prefer the
// HTTP verb; the source defaults to "api:delete".
func (s *Server) handleDeleteKey(c *gin.Context) {
	key, expect, ok := s.keyWriteTarget(c)
	if !ok {
		return
	}
	if err := queryParams(c, "user_id"); err != nil {
		writeError(c, err)
		return
	}
	respondMemory(c)(s.cfg.Memories.SetKey(userContext(c), engram.KeyWrite{
		Key: key, Content: json.RawMessage("null"), Source: json.RawMessage(`"api:delete"`), ExpectVersion: expect,
	}))
}
