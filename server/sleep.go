package server

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// handleSleep runs one sleep cycle of the key's tenant: POST /v1/sleep,
// no body. A small tenant answers 200 with what the sleep did; a large
// one 202 with the job that runs it (docs/jobs.md).
func (s *Server) handleSleep(c *gin.Context) {
	if c.Request.ContentLength > 0 {
		var none struct{}
		if err := s.decodeJSON(c, &none); err != nil {
			writeError(c, err)
			return
		}
	}
	res, job, err := s.cfg.Jobs.Sleep(c.Request.Context())
	switch {
	case err != nil:
		writeError(c, err)
	case job != nil:
		accepted(c, job)
	default:
		c.JSON(http.StatusOK, res)
	}
}
