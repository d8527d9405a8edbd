package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// aliasRequest is the body of PUT /v1/aliases/{alias}: the key the alias
// names, of the end user user_id ("" the shared key).
type aliasRequest struct {
	Key    string `json:"key"`
	UserID string `json:"user_id"`
}

// addAliasRoutes adds the alias routes when the server has an alias
// store. An alias is read from the path as a key is (keyParam).
func (s *Server) addAliasRoutes(v1 *gin.RouterGroup) {
	aliases := s.cfg.Aliases
	if aliases == nil {
		return
	}
	aliasParam := func(c *gin.Context) (string, error) {
		return wire.PathKey(c.Request.URL.EscapedPath(), "/v1/aliases", s.cfg.Limits.Keys)
	}
	v1.PUT("/aliases/*alias", func(c *gin.Context) {
		alias, err := aliasParam(c)
		var req aliasRequest
		if err == nil {
			err = s.decodeJSON(c, &req)
		}
		if err == nil && req.Key == "" {
			err = engram.Errorf(engram.EINVALID, "key is required: the key the alias names")
		}
		if err != nil {
			writeError(c, err)
			return
		}
		a, err := aliases.SetAlias(engram.NewContextWithUser(c.Request.Context(), req.UserID), alias, req.Key)
		if err != nil {
			writeError(c, err)
			return
		}
		c.JSON(http.StatusOK, a)
	})
	read := func(do func(ctx *gin.Context, alias string) (*engram.Alias, error)) gin.HandlerFunc {
		return func(c *gin.Context) {
			alias, err := aliasParam(c)
			if err == nil {
				err = queryParams(c, "user_id")
			}
			if err != nil {
				writeError(c, err)
				return
			}
			a, err := do(c, alias)
			if err != nil {
				writeError(c, err)
				return
			}
			c.JSON(http.StatusOK, a)
		}
	}
	v1.GET("/aliases/*alias", read(func(c *gin.Context, alias string) (*engram.Alias, error) {
		return aliases.FindAlias(userContext(c), alias)
	}))
	v1.DELETE("/aliases/*alias", read(func(c *gin.Context, alias string) (*engram.Alias, error) {
		return aliases.DeleteAlias(userContext(c), alias)
	}))
	v1.GET("/memories/:id/aliases", func(c *gin.Context) {
		as, err := aliases.FindAliases(c.Request.Context(), memoryID(c))
		if err != nil {
			writeError(c, err)
			return
		}
		c.JSON(http.StatusOK, listResponse[*engram.Alias]{Items: as})
	})
}
