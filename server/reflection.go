package server

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

// handleReflect runs the reflector: POST /v1/reflect with an optional
// body {"category"}. A request without a body reflects every category.
// With jobs configured, a large tenant's reflect becomes a job: 202 with
// its id and where to follow it (docs/jobs.md); a small tenant's answers
// 200 with the result, as without jobs.
func (s *Server) handleReflect(c *gin.Context) {
	var req engram.ReflectRequest
	if c.Request.ContentLength != 0 || c.GetHeader("Content-Type") != "" {
		if err := s.decodeJSON(c, &req); err != nil {
			writeError(c, err)
			return
		}
	}
	if s.cfg.Jobs != nil {
		res, job, err := s.cfg.Jobs.Reflect(c.Request.Context(), req)
		switch {
		case err != nil:
			writeError(c, err)
		case job != nil:
			accepted(c, job)
		default:
			c.JSON(http.StatusOK, res)
		}
		return
	}
	res, err := s.cfg.Reflections.Reflect(c.Request.Context(), req)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

func (s *Server) handleListReflections(c *gin.Context) {
	if err := queryParams(c, "category", "user_id", "limit", "cursor"); err != nil {
		writeError(c, err)
		return
	}
	f := engram.ReflectionFilter{Cursor: c.Query("cursor")}
	if v, ok := c.GetQuery("category"); ok {
		f.Category = &v
	}
	if v, ok := c.GetQuery("user_id"); ok { // exactly this user's, as GET /v1/memories
		f.UserID = &v
	}
	var err error
	if f.Limit, err = limitParam(c); err != nil {
		writeError(c, err)
		return
	}
	page, err := s.cfg.Reflections.FindReflections(c.Request.Context(), f)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, listResponse[*engram.Reflection]{Items: page.Items, NextCursor: page.NextCursor})
}

// reflectionVersion is one entry of a reflection's history.
type reflectionVersion struct {
	Version     int64              `json:"version"`
	Writer      string             `json:"writer"`
	Fallback    string             `json:"fallback,omitempty"`
	Cited       []engram.MemoryRef `json:"cited"`
	Fingerprint string             `json:"fingerprint"`
	CreatedAt   time.Time          `json:"created_at"`
}

// handleGetReflection answers the current version — Markdown, its HTML,
// the memories cited — and the history of versions.
func (s *Server) handleGetReflection(c *gin.Context) {
	if err := queryParams(c); err != nil {
		writeError(c, err)
		return
	}
	ctx := c.Request.Context()
	r, err := s.cfg.Reflections.FindReflectionByID(ctx, c.Param("id"))
	if err != nil {
		writeError(c, err)
		return
	}
	versions, err := s.cfg.Reflections.FindReflectionVersions(ctx, r.ID)
	if err != nil {
		writeError(c, err)
		return
	}
	history := make([]reflectionVersion, len(versions))
	for i, v := range versions {
		history[i] = reflectionVersion{Version: v.Version, Writer: v.Writer, Fallback: v.Fallback, Cited: v.Cited,
			Fingerprint: v.Fingerprint, CreatedAt: v.CreatedAt}
	}
	c.JSON(http.StatusOK, struct {
		*engram.Reflection
		Versions []reflectionVersion `json:"versions"`
	}{r, history})
}
