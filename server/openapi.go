package server

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// openAPI is the API v1 as OpenAPI 3.1: the contract the clients under
// clients/ are written to. It is kept by hand beside the routes; the
// server's tests fail when a route is missing from it (or it names one
// that does not exist) and when a real response does not match it. To
// add a route: a path item under "paths" (its parameters, requestBody
// and responses, "default" pointing at #/components/responses/Error),
// its shapes under components/schemas.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the document GET /openapi.json serves.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// handleOpenAPI serves the document without a key: it describes the API,
// no tenant's data.
func handleOpenAPI(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/json", openAPI)
}
