package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// linkRequest is the body of POST /v1/memories/{id}/links.
type linkRequest struct {
	To       string `json:"to"`
	Relation string `json:"relation"`
}

// addLinkRoutes adds the link routes when the memory service stores
// links too (store.DB does).
func (s *Server) addLinkRoutes(v1 *gin.RouterGroup) {
	links, ok := s.cfg.Memories.(engram.LinkService)
	if !ok {
		return
	}
	v1.POST("/memories/:id/links", func(c *gin.Context) {
		var req linkRequest
		if err := s.decodeJSON(c, &req); err != nil {
			writeError(c, err)
			return
		}
		if req.To == "" {
			writeError(c, engram.Errorf(engram.EINVALID, "to is required: the id of the memory to link to"))
			return
		}
		l, err := links.CreateLink(c.Request.Context(), engram.Link{From: memoryID(c), To: wire.MemoryID(req.To), Relation: req.Relation})
		if err != nil {
			writeError(c, err)
			return
		}
		c.JSON(http.StatusOK, l)
	})
	v1.GET("/memories/:id/links", func(c *gin.Context) {
		ls, err := links.FindLinks(c.Request.Context(), memoryID(c))
		if err != nil {
			writeError(c, err)
			return
		}
		c.JSON(http.StatusOK, listResponse[*engram.Link]{Items: ls})
	})
	unlink := func(c *gin.Context) {
		removed, err := links.DeleteLink(c.Request.Context(), memoryID(c), wire.MemoryID(c.Param("to")), c.Param("relation"))
		if err != nil {
			writeError(c, err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"removed": removed})
	}
	v1.DELETE("/memories/:id/links/:to", unlink)
	v1.DELETE("/memories/:id/links/:to/:relation", unlink)
}
