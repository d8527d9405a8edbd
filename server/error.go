package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// errMethod is the HTTP-only code for a known path with a wrong method.
const errMethod = wire.EMETHOD

// writeError sends {"error":{"code","message"}} with the status of the
// one code→status table (wire.Status). Internal errors show a generic
// message and are logged in full with the request id.
func writeError(c *gin.Context, err error) {
	status, code := wire.Status(err)
	if code == engram.EINTERNAL {
		_ = c.Error(err) // logged by logRequests
	}
	if status == http.StatusUnauthorized {
		c.Header("WWW-Authenticate", `Bearer realm="engram"`)
	}
	c.Abort()
	c.Data(status, "application/json; charset=utf-8", wire.ErrorBody(err))
}
