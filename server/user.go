package server

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

// userContext is the request's context scoped to its user_id query
// parameter (engram.NewContextWithUser); queryParams has checked it.
func userContext(c *gin.Context) context.Context {
	return engram.NewContextWithUser(c.Request.Context(), c.Query("user_id"))
}

// handleForgetUser erases an end user of the tenant: DELETE
// /v1/users/{id} answers the counts of what went (engram.ForgetResult).
func (s *Server) handleForgetUser(c *gin.Context) {
	id := c.Param("id")
	if err := engram.CheckID("user id", id); err != nil {
		writeError(c, err)
		return
	}
	res, err := s.cfg.Users.ForgetUser(c.Request.Context(), id)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}
