package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// createMemoryRequest is the body of POST /v1/memories.
type createMemoryRequest struct {
	Content       string          `json:"content"`
	Category      string          `json:"category"`
	Subcategory   string          `json:"subcategory"`
	Type          string          `json:"type"`
	Tags          []string        `json:"tags"`
	Data          json.RawMessage `json:"data"`
	Summary       string          `json:"summary"`
	Context       string          `json:"context"`
	Importance    *float64        `json:"importance"` // absent or 0: the default
	Priority      engram.Priority `json:"priority"`
	Confidence    *float64        `json:"confidence"` // absent or 0: the default
	Emotion       *float64        `json:"emotion"`    // absent: estimated from the content
	AgentID       string          `json:"agent_id"`
	UserID        string          `json:"user_id"`
	Key           string          `json:"key"`
	Source        json.RawMessage `json:"source"`
	SecurityLevel string          `json:"security_level"`
	ExpiresAt     json.RawMessage `json:"expires_at"`
	// Gate holds this write to the write gate (see Server.gated).
	Gate *bool `json:"gate"`
}

type createMemoryResponse struct {
	Memory       *engram.Memory `json:"memory"`
	Deduplicated bool           `json:"deduplicated"`
}

func (s *Server) handleCreateMemory(c *gin.Context) {
	var req createMemoryRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	m, err := s.newMemory(req)
	if err == nil {
		err = s.checkGate(c.Request.Context(), m, req.Gate)
	}
	if err != nil {
		writeError(c, err)
		return
	}
	res, err := s.cfg.Memories.CreateMemory(c.Request.Context(), m)
	if err != nil {
		writeError(c, err)
		return
	}
	status := http.StatusCreated
	if res.Deduplicated {
		status = http.StatusOK
	}
	setETag(c, res.Memory.Version)
	c.JSON(status, createMemoryResponse{Memory: res.Memory, Deduplicated: res.Deduplicated})
}

// newMemory checks what only the HTTP layer knows (key syntax, key
// provenance) and builds the memory to create.
func (s *Server) newMemory(req createMemoryRequest) (*engram.Memory, error) {
	m := &engram.Memory{
		Content: req.Content, Category: req.Category, Subcategory: req.Subcategory, Type: req.Type, Tags: req.Tags,
		Data: nullToEmpty(req.Data), Summary: req.Summary, Context: req.Context, Priority: req.Priority, AgentID: req.AgentID,
		UserID: req.UserID,
		Source: nullToEmpty(req.Source), SecurityLevel: req.SecurityLevel, Emotion: req.Emotion,
	}
	var err error
	if m.ExpiresAt, err = parseTime("expires_at", req.ExpiresAt); err != nil {
		return nil, err
	}
	set(&m.Importance, req.Importance)
	set(&m.Confidence, req.Confidence)
	if req.Key != "" {
		key, err := engram.NormalizeKey(req.Key, s.cfg.Limits.Keys)
		if err != nil {
			return nil, err
		}
		if err := engram.CheckProvenance(key, m.Source); err != nil {
			return nil, err
		}
		m.Key = key
	}
	return m, nil
}

type batchRequest struct {
	Memories []createMemoryRequest `json:"memories"`
}

// handleCreateBatch stores up to Limits.MaxBatch memories in one
// transaction: all of them, or (on any invalid one) none. A batch naming
// one key twice is refused before the store (engram.CheckBatchKeys).
func (s *Server) handleCreateBatch(c *gin.Context) {
	var req batchRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	if n := len(req.Memories); n == 0 || n > s.cfg.Limits.MaxBatch {
		writeError(c, engram.Errorf(engram.EINVALID, "memories must hold 1 to %d memories, got %d", s.cfg.Limits.MaxBatch, n))
		return
	}
	ms := make([]*engram.Memory, len(req.Memories))
	keys := make([]string, len(req.Memories))
	for i, r := range req.Memories {
		m, err := s.newMemory(r)
		if err == nil {
			err = s.checkGate(c.Request.Context(), m, r.Gate)
		}
		if err != nil {
			writeError(c, engram.Errorf(engram.ErrorCode(err), "memories[%d]: %s", i, engram.ErrorMessage(err)))
			return
		}
		ms[i], keys[i] = m, m.Key
	}
	if err := engram.CheckBatchKeys(keys); err != nil {
		writeError(c, err)
		return
	}
	res, err := s.cfg.Memories.CreateMemories(c.Request.Context(), ms)
	if err != nil {
		writeError(c, err)
		return
	}
	items := make([]createMemoryResponse, len(res))
	for i, r := range res {
		items[i] = createMemoryResponse{Memory: r.Memory, Deduplicated: r.Deduplicated}
	}
	c.JSON(http.StatusOK, listResponse[createMemoryResponse]{Items: items})
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

type listResponse[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

func (s *Server) handleListMemories(c *gin.Context) {
	if err := queryParams(c, "category", "tag", "q", "needs_revision", "quarantined", "key_prefix", "agent_id", "user_id",
		"include_deleted", "include_archived", "limit", "cursor"); err != nil {
		writeError(c, err)
		return
	}
	var f engram.MemoryFilter
	str := func(name string) *string {
		if v, ok := c.GetQuery(name); ok {
			return &v
		}
		return nil
	}
	f.Category, f.Tag, f.Query, f.KeyPrefix, f.AgentID = str("category"), str("tag"), str("q"), str("key_prefix"), str("agent_id")
	f.UserID = str("user_id")
	f.Cursor = c.Query("cursor")
	var err error
	if f.NeedsRevision, err = boolParam(c, "needs_revision"); err != nil {
		writeError(c, err)
		return
	}
	if f.Quarantined, err = boolParam(c, "quarantined"); err != nil {
		writeError(c, err)
		return
	}
	for name, dst := range map[string]*bool{"include_deleted": &f.IncludeInvalid, "include_archived": &f.IncludeArchived} {
		b, err := boolParam(c, name)
		if err != nil {
			writeError(c, err)
			return
		}
		*dst = b != nil && *b
	}
	if f.Limit, err = limitParam(c); err != nil {
		writeError(c, err)
		return
	}
	page, err := s.cfg.Memories.FindMemories(c.Request.Context(), f)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, listResponse[*engram.Memory]{Items: page.Items, NextCursor: page.NextCursor})
}

func boolParam(c *gin.Context, name string) (*bool, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return nil, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "%s must be true or false", name)
	}
	return &b, nil
}

func (s *Server) handleGetMemory(c *gin.Context) {
	respondMemory(c)(s.cfg.Memories.FindMemoryByID(c.Request.Context(), memoryID(c)))
}

// patchMemoryRequest is the body of PATCH /v1/memories/{id}: absent
// fields stay; "expires_at": null clears the expiry, "data": null clears
// the data. "version" is an alternative to If-Match.
type patchMemoryRequest struct {
	AgentID       *string          `json:"agent_id"`
	Category      *string          `json:"category"`
	Subcategory   *string          `json:"subcategory"`
	Type          *string          `json:"type"`
	Tags          *[]string        `json:"tags"`
	Content       *string          `json:"content"`
	Data          json.RawMessage  `json:"data"`
	Summary       *string          `json:"summary"`
	Context       *string          `json:"context"`
	Importance    *float64         `json:"importance"`
	Priority      *engram.Priority `json:"priority"`
	Confidence    *float64         `json:"confidence"`
	Emotion       *float64         `json:"emotion"`
	NeedsRevision *bool            `json:"needs_revision"`
	Source        json.RawMessage  `json:"source"`
	SecurityLevel *string          `json:"security_level"`
	Archived      *bool            `json:"archived"`
	ExpiresAt     json.RawMessage  `json:"expires_at"`
	Version       *int64           `json:"version"`
}

// changesNothing reports a patch that names no field but the version:
// refused, rather than answered with an unchanged memory, so that a
// client whose fields were lost on the way learns of it.
func (r *patchMemoryRequest) changesNothing() bool {
	v := reflect.ValueOf(*r)
	for i := range v.NumField() {
		if v.Type().Field(i).Name != "Version" && !v.Field(i).IsNil() {
			return false
		}
	}
	return true
}

func (s *Server) handlePatchMemory(c *gin.Context) {
	expect, err := ifMatch(c)
	if err != nil {
		writeError(c, err)
		return
	}
	var req patchMemoryRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	if req.changesNothing() {
		writeError(c, engram.Errorf(engram.EINVALID, "no field to change: send at least one field besides version"))
		return
	}
	if req.Version != nil {
		if expect != nil && *expect != *req.Version {
			writeError(c, engram.Errorf(engram.EINVALID, "If-Match and version disagree"))
			return
		}
		expect = req.Version
	}
	u := engram.MemoryUpdate{
		AgentID: req.AgentID, Category: req.Category, Subcategory: req.Subcategory, Type: req.Type, Tags: req.Tags,
		Content: req.Content, Summary: req.Summary, Context: req.Context, Importance: req.Importance, Priority: req.Priority,
		Confidence: req.Confidence, Emotion: req.Emotion, NeedsRevision: req.NeedsRevision, SecurityLevel: req.SecurityLevel,
		Archived: req.Archived, ExpectVersion: expect,
	}
	if req.Data != nil {
		d := nullToEmpty(req.Data)
		u.Data = &d
	}
	if req.Source != nil {
		src := nullToEmpty(req.Source)
		u.Source = &src
	}
	if req.ExpiresAt != nil {
		if u.ExpiresAt, err = parseTime("expires_at", req.ExpiresAt); err != nil {
			writeError(c, err)
			return
		}
		u.ClearExpiry = u.ExpiresAt == nil
	}
	respondMemory(c)(s.cfg.Memories.UpdateMemory(c.Request.Context(), memoryID(c), u))
}

func (s *Server) handleDeleteMemory(c *gin.Context) {
	expect, err := ifMatch(c)
	if err != nil {
		writeError(c, err)
		return
	}
	respondMemory(c)(s.cfg.Memories.DeleteMemory(c.Request.Context(), memoryID(c), expect))
}

// History pages: limit defaults to defaultHistoryPage, at most
// maxHistoryPage; next_cursor (the last version on the page) resumes.
const (
	defaultHistoryPage = 100
	maxHistoryPage     = 500
)

func (s *Server) handleMemoryHistory(c *gin.Context) {
	if err := queryParams(c, "limit", "cursor"); err != nil {
		writeError(c, err)
		return
	}
	limit := defaultHistoryPage
	if v, ok := c.GetQuery("limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxHistoryPage {
			writeError(c, engram.Errorf(engram.EINVALID, "limit must be an integer from 1 to %d", maxHistoryPage))
			return
		}
		limit = n
	}
	var after int64
	if v, ok := c.GetQuery("cursor"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			writeError(c, engram.Errorf(engram.EINVALID, "cursor must be the next_cursor of a previous page"))
			return
		}
		after = n
	}
	events, err := s.cfg.Memories.FindMemoryEventsPage(c.Request.Context(), memoryID(c), after, limit+1)
	if err != nil {
		writeError(c, err)
		return
	}
	page := listResponse[*engram.MemoryEvent]{Items: events}
	if len(events) > limit {
		page.Items = events[:limit]
		page.NextCursor = strconv.FormatInt(events[limit-1].Version, 10)
	}
	c.JSON(http.StatusOK, page)
}

func (s *Server) handleMemoryImpact(c *gin.Context) {
	imp, err := s.cfg.Feedback.Impact(c.Request.Context(), memoryID(c))
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, imp)
}

type rollbackRequest struct {
	Version int64 `json:"version"`
}

func (s *Server) handleRollbackMemory(c *gin.Context) {
	expect, err := ifMatch(c)
	if err != nil {
		writeError(c, err)
		return
	}
	var req rollbackRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	respondMemory(c)(s.cfg.Memories.RollbackMemory(c.Request.Context(), memoryID(c), req.Version, expect))
}

// memoryID is the :id path parameter (wire.MemoryID: an id that could not
// have been issued gets the same 404 as any unknown id).
func memoryID(c *gin.Context) string {
	return wire.MemoryID(c.Param("id"))
}

// respondMemory returns a function that answers a request with a memory
// and its ETag, or with the error; it takes a service call's results
// directly: respondMemory(c)(s.cfg.Memories.FindMemoryByID(ctx, id)).
func respondMemory(c *gin.Context) func(*engram.Memory, error) {
	return func(m *engram.Memory, err error) {
		if err != nil {
			writeError(c, err)
			return
		}
		setETag(c, m.Version)
		c.JSON(http.StatusOK, m)
	}
}
