package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// decodeJSON reads the request body into dst with the strict rules of
// every door (wire.Decode), refusing with a clear 4xx before anything is
// written: a non-JSON content type (415), a body over the limit (413),
// and (400) an empty body, invalid UTF-8, nesting deeper than the limit,
// NUL or a lone surrogate, a duplicate or case-folded field, unknown
// fields, wrong types, trailing data, or a bad session, resource or
// agent id.
func (s *Server) decodeJSON(c *gin.Context, dst any) error {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "application/json" {
		return engram.Errorf(engram.EUNSUPPORTED, "Content-Type must be application/json")
	}
	body, err := wire.ReadBody(c.Writer, c.Request, s.cfg.Limits.MaxBodyBytes)
	if err != nil {
		return err
	}
	return wire.Decode(body, dst, s.cfg.Limits.MaxJSONDepth)
}

// readBody reads a body of one of the given media types (the first is
// named in the error) with the limits of decodeJSON: 415, 413, and 400
// for an empty body or invalid UTF-8. A JSON body is kept as JSON (a
// merge patch) and checked as a document (wire.CheckDocument): depth,
// NUL, lone surrogates, validity, and no field named twice at any depth.
func (s *Server) readBody(c *gin.Context, types ...string) ([]byte, string, error) {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || !slices.Contains(types, mt) {
		return nil, "", engram.Errorf(engram.EUNSUPPORTED, "Content-Type must be %s", strings.Join(types, " or "))
	}
	body, err := wire.ReadBody(c.Writer, c.Request, s.cfg.Limits.MaxBodyBytes)
	if err != nil {
		return nil, "", err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, "", engram.Errorf(engram.EINVALID, "request body is empty")
	}
	if !utf8.Valid(body) {
		return nil, "", engram.Errorf(engram.EINVALID, "request body is not valid UTF-8")
	}
	if strings.HasSuffix(mt, "json") {
		if err := wire.CheckDocument(body, s.cfg.Limits.MaxJSONDepth); err != nil {
			return nil, "", err
		}
	}
	return body, mt, nil
}

// parseTime reads an optional RFC 3339 time field (wire.ParseTime).
func parseTime(name string, raw json.RawMessage) (*time.Time, error) {
	return wire.ParseTime(name, raw)
}

// ifMatch reads the expected version from If-Match ("3", W/"3" or 3).
func ifMatch(c *gin.Context) (*int64, error) {
	h := strings.TrimSpace(c.GetHeader("If-Match"))
	if h == "" {
		return nil, nil
	}
	v, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(h, "W/"), `"`), 10, 64)
	if err != nil || v < 1 {
		return nil, engram.Errorf(engram.EINVALID, "If-Match must be a memory version such as \"3\"")
	}
	return &v, nil
}

func setETag(c *gin.Context, version int64) {
	c.Header("ETag", fmt.Sprintf("%q", strconv.FormatInt(version, 10)))
}

// strictQuery refuses a query string that does not parse (a stray %),
// which the handlers would otherwise read as if the broken pair were not
// there, and any query parameter on an endpoint that takes none.
func strictQuery(c *gin.Context) {
	if _, err := url.ParseQuery(c.Request.URL.RawQuery); err != nil {
		writeError(c, engram.Errorf(engram.EINVALID, "malformed query string: %s", strings.TrimPrefix(err.Error(), "invalid URL escape ")))
		c.Abort()
		return
	}
	if !takesQuery[c.Request.Method+" "+c.FullPath()] {
		if err := queryParams(c); err != nil {
			writeError(c, err)
			c.Abort()
			return
		}
	}
	c.Next()
}

// takesQuery lists the endpoints that read query parameters; each checks
// its own with queryParams.
var takesQuery = map[string]bool{
	"GET /v1/memories": true, "GET /v1/memories/:id/history": true, "GET /v1/context": true, "GET /v1/boot": true,
	"GET /v1/pairs": true, "GET /v1/reflections": true, "GET /v1/reflections/:id": true, "GET /v1/jobs": true,
	"GET /v1/jobs/:id":           true,
	"GET /v1/agents/:id/persona": true, "PUT /v1/agents/:id/persona": true,
	"GET /v1/keys/*key": true, "DELETE /v1/keys/*key": true, "GET /v1/aliases/*alias": true, "DELETE /v1/aliases/*alias": true,
	// Import checks its own (ids).
	"POST /v1/import": true, "POST /v1/admin/tenants/:tenant/import": true,
	// Every GET, PUT and PATCH under /v1/sessions checks its own (events:
	// none; context: token_limit; state: scope); its POSTs take none.
	"GET /v1/sessions/*rest": true, "PUT /v1/sessions/*rest": true, "PATCH /v1/sessions/*rest": true,
}

// queryParams checks that every query parameter is known and given once,
// so that a misspelt filter is an error rather than silently ignored, and
// that an agent or session id among them is a valid one.
func queryParams(c *gin.Context, known ...string) error {
	for name, vals := range c.Request.URL.Query() {
		ok := false
		for _, k := range known {
			ok = ok || k == name
		}
		switch {
		case !ok && len(known) == 0:
			return engram.Errorf(engram.EINVALID, "unknown query parameter %q; this endpoint takes none", name)
		case !ok:
			return engram.Errorf(engram.EINVALID, "unknown query parameter %q; known: %s", name, strings.Join(known, ", "))
		}
		if len(vals) > 1 {
			return engram.Errorf(engram.EINVALID, "query parameter %q given more than once", name)
		}
		if strings.ContainsRune(vals[0], 0) || !utf8.ValidString(vals[0]) {
			return engram.Errorf(engram.EINVALID, "query parameter %q must be valid UTF-8 without NUL", name)
		}
		if err := wire.CheckParam(name, vals[0]); err != nil {
			return err
		}
	}
	return nil
}

// errStop ends an iteration early without being an error.
var errStop = errors.New("stop")
