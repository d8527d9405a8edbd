package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

func (s *Server) handlePrompt(c *gin.Context) {
	var req engram.PromptRequest
	if err := s.decodeJSON(c, &req); err != nil {
		writeError(c, err)
		return
	}
	p, err := s.cfg.Prompt.Prompt(c.Request.Context(), req)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, p)
}
