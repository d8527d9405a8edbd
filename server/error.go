package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

// errMethod is the HTTP-only code for a known path with a wrong method.
const errMethod = "method_not_allowed"

// codes maps every error code to its HTTP status; this is the only place.
var codes = map[string]int{
	engram.EINVALID:      http.StatusBadRequest,
	engram.EUNAUTHORIZED: http.StatusUnauthorized,
	engram.ENOTFOUND:     http.StatusNotFound,
	engram.ECONFLICT:     http.StatusConflict,
	engram.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	engram.EUNSUPPORTED:  http.StatusUnsupportedMediaType,
	errMethod:            http.StatusMethodNotAllowed,
	engram.EINTERNAL:     http.StatusInternalServerError,

	engram.EUNPROCESSABLE: http.StatusUnprocessableEntity,
	engram.EQUOTA:         http.StatusForbidden,
	engram.ERATELIMITED:   http.StatusTooManyRequests,
}

// writeError sends {"error":{"code","message"}}. Internal errors show a
// generic message and are logged in full with the request id.
func writeError(c *gin.Context, err error) {
	code := engram.ErrorCode(err)
	status, ok := codes[code]
	if !ok {
		status, code = http.StatusInternalServerError, engram.EINTERNAL
	}
	if code == engram.EINTERNAL {
		_ = c.Error(err) // logged by logRequests
	}
	if status == http.StatusUnauthorized {
		c.Header("WWW-Authenticate", `Bearer realm="engram"`)
	}
	c.AbortWithStatusJSON(status, gin.H{"error": gin.H{"code": code, "message": engram.ErrorMessage(err)}})
}
