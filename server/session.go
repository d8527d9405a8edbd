package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

// sessionActions are the endpoints under /v1/sessions/{id}/ and the
// methods each allows.
var sessionActions = map[string][]string{
	"events":  {http.MethodGet, http.MethodPost},
	"context": {http.MethodGet},
	"state":   {http.MethodGet, http.MethodPut, http.MethodPatch},
	"end":     {http.MethodPost},
}

// handleSessions serves /v1/sessions/{id}/{action}. The path is split
// before percent-decoding, so that a session id holding "/" (sent as
// %2F) is refused as a bad id (400) rather than routed elsewhere.
func (s *Server) handleSessions(c *gin.Context) {
	rest := strings.TrimPrefix(c.Request.URL.EscapedPath(), "/v1/sessions/")
	segs := strings.Split(rest, "/")
	action := segs[len(segs)-1]
	allowed, known := sessionActions[action]
	if !known || len(segs) < 2 {
		writeError(c, engram.Errorf(engram.ENOTFOUND, "no such endpoint"))
		return
	}
	id, err := url.PathUnescape(strings.Join(segs[:len(segs)-1], "/"))
	if err != nil {
		id = "" // a malformed escape: refused as a bad id
	}
	if err := engram.CheckID("session id", id); err != nil {
		writeError(c, err)
		return
	}
	if !slices.Contains(allowed, c.Request.Method) {
		c.Header("Allow", strings.Join(allowed, ", "))
		writeError(c, &engram.Error{Code: errMethod, Message: "method not allowed on this endpoint"})
		return
	}
	switch action + " " + c.Request.Method {
	case "events POST":
		s.handleSessionEvents(c, id)
	case "events GET":
		s.handleListSessionEvents(c, id)
	case "context GET":
		s.handleSessionContext(c, id)
	case "state GET", "state PUT", "state PATCH":
		s.handleSessionState(c, id)
	case "end POST":
		s.handleSessionEnd(c, id)
	}
}

// eventIn is one event as a client sends it.
type eventIn struct {
	Type      string          `json:"type"`
	Speaker   string          `json:"speaker"`
	Role      string          `json:"role"`
	Content   string          `json:"content"`
	At        json.RawMessage `json:"at"`
	MessageID string          `json:"message_id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	Result    json.RawMessage `json:"result"`
}

func (e *eventIn) event() (*engram.SessionEvent, error) {
	at, err := parseTime("at", e.At)
	if err != nil {
		return nil, err
	}
	return &engram.SessionEvent{Type: e.Type, Speaker: e.Speaker, Role: e.Role, Content: e.Content, At: at,
		MessageID: e.MessageID, Name: e.Name, Args: e.Args, Result: e.Result}, nil
}

func (e *eventIn) empty() bool {
	return e.Type == "" && e.Speaker == "" && e.Role == "" && e.Content == "" && e.At == nil && e.MessageID == "" &&
		e.Name == "" && e.Args == nil && e.Result == nil
}

// eventsRequest is one event, or {"resource_id"?, "events": […]}; a
// single event may carry resource_id too.
type eventsRequest struct {
	eventIn
	ResourceID string    `json:"resource_id"`
	UserID     string    `json:"user_id"` // the session's end user, set by its first event
	Events     []eventIn `json:"events"`
}

func (s *Server) handleSessionEvents(c *gin.Context, id string) {
	var req eventsRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	b := engram.EventBatch{ResourceID: req.ResourceID}
	switch {
	case req.Events != nil && !req.eventIn.empty():
		writeError(c, engram.Errorf(engram.EINVALID, "send one event or {\"events\":[…]}, not both"))
		return
	case req.Events != nil:
		for i := range req.Events {
			ev, err := req.Events[i].event()
			if err != nil {
				writeError(c, engram.Errorf(engram.EINVALID, "events[%d]: %s", i, engram.ErrorMessage(err)))
				return
			}
			b.Events = append(b.Events, ev)
		}
	default:
		ev, err := req.event()
		if err != nil {
			writeError(c, err)
			return
		}
		b.Events = []*engram.SessionEvent{ev}
	}
	res, err := s.cfg.Sessions.AppendEvents(engram.NewContextWithUser(c.Request.Context(), req.UserID), id, b)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusCreated, res)
}

// handleListSessionEvents serves one page of a session's events, oldest
// first: limit (default limits.default_list_limit, at most
// limits.max_list_limit) and cursor (the previous page's next_cursor).
func (s *Server) handleListSessionEvents(c *gin.Context, id string) {
	if err := queryParams(c, "limit", "cursor"); err != nil {
		writeError(c, err)
		return
	}
	page := engram.EventPage{Cursor: c.Query("cursor")}
	var err error
	if page.Limit, err = limitParam(c); err != nil {
		writeError(c, err)
		return
	}
	list, err := s.cfg.Sessions.Events(c.Request.Context(), id, page)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, list)
}

func (s *Server) handleSessionContext(c *gin.Context, id string) {
	if err := queryParams(c, "token_limit"); err != nil {
		writeError(c, err)
		return
	}
	limit, err := intParam(c, "token_limit")
	if err != nil {
		writeError(c, err)
		return
	}
	out, err := s.cfg.Sessions.Context(c.Request.Context(), id, limit)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

type putStateRequest struct {
	State  json.RawMessage `json:"state"`
	Schema json.RawMessage `json:"schema"`
}

// handleSessionState serves the session's document, or with
// ?scope=resource its resource's. PATCH takes a JSON Merge Patch, sent as
// application/merge-patch+json or application/json.
func (s *Server) handleSessionState(c *gin.Context, id string) {
	if err := queryParams(c, "scope"); err != nil {
		writeError(c, err)
		return
	}
	ctx, scope := c.Request.Context(), c.Query("scope")
	var st *engram.WorkingState
	var err error
	switch c.Request.Method {
	case http.MethodGet:
		st, err = s.cfg.Sessions.State(ctx, id, scope)
	case http.MethodPut:
		var req putStateRequest
		if err = s.decodeJSON(c, &req); err == nil {
			st, err = s.cfg.Sessions.PutState(ctx, id, scope, req.State, req.Schema)
		}
	case http.MethodPatch:
		var body []byte
		if body, _, err = s.readBody(c, "application/merge-patch+json", "application/json"); err == nil {
			st, err = s.cfg.Sessions.PatchState(ctx, id, scope, body)
		}
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

type endRequest struct {
	Outcome string `json:"outcome"`
	Note    string `json:"note"`
}

func (s *Server) handleSessionEnd(c *gin.Context, id string) {
	var req endRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	out, err := s.cfg.Sessions.End(c.Request.Context(), id, req.Outcome, req.Note)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
