package server

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

type personaRequest struct {
	Markdown string `json:"markdown"`
}

// handlePutPersona stores a new version of an agent's persona: a
// text/markdown (or text/plain) body, or JSON {"markdown"}.
func (s *Server) handlePutPersona(c *gin.Context) {
	id := c.Param("id")
	err := engram.CheckID("agent id", id)
	if err == nil {
		err = queryParams(c, "user_id")
	}
	if err != nil {
		writeError(c, err)
		return
	}
	body, mt, err := s.readBody(c, "text/markdown", "text/plain", "application/json")
	if err != nil {
		writeError(c, err)
		return
	}
	markdown := string(body)
	if mt == "application/json" {
		var req personaRequest
		if err := wire.Decode(body, &req, s.cfg.Limits.MaxJSONDepth); err != nil {
			writeError(c, err)
			return
		}
		markdown = req.Markdown
	}
	p, err := s.cfg.Personas.PutPersona(userContext(c), id, markdown)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, p)
}

// handleGetPersona returns the current persona, or ?version=N. With
// Accept: text/markdown the body is the Markdown itself.
func (s *Server) handleGetPersona(c *gin.Context) {
	if err := queryParams(c, "version", "user_id"); err != nil {
		writeError(c, err)
		return
	}
	var version int64
	if v, ok := c.GetQuery("version"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			writeError(c, engram.Errorf(engram.EINVALID, "version must be a positive integer"))
			return
		}
		version = n
	}
	p, err := s.cfg.Personas.Persona(userContext(c), c.Param("id"), version)
	if err != nil {
		writeError(c, err)
		return
	}
	if c.NegotiateFormat(gin.MIMEJSON, "text/markdown") == "text/markdown" {
		c.Data(http.StatusOK, "text/markdown; charset=utf-8", []byte(p.Markdown))
		return
	}
	c.JSON(http.StatusOK, p)
}
