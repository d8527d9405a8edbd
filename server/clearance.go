package server

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
)

// WithheldHeader counts, on a response to a tenant key, the memories
// above the key's clearance that the request left out or masked.
const WithheldHeader = "X-Engram-Withheld"

// readerOf is who reads through key (engram.Reader).
func readerOf(key *engram.APIKey) engram.Reader {
	clearance := key.Clearance
	if clearance == "" {
		clearance = engram.DefaultClearance
	}
	return engram.Reader{Clearance: clearance, MaskPII: key.MaskPII, Withhold: key.Withhold, Gate: key.Gate, GateMode: key.GateMode}
}

// withheldWriter sets WithheldHeader as the response starts: every
// handler has read what it answers with by then, streams included.
type withheldWriter struct {
	gin.ResponseWriter
	c *gin.Context
}

func (w *withheldWriter) count() {
	if w.Written() {
		return
	}
	if n := engram.Withheld(w.c.Request.Context()); n > 0 {
		w.Header().Set(WithheldHeader, strconv.Itoa(n))
	}
}

// WriteHeaderNow implements gin.ResponseWriter.
func (w *withheldWriter) WriteHeaderNow() {
	w.count()
	w.ResponseWriter.WriteHeaderNow()
}

// Write implements http.ResponseWriter.
func (w *withheldWriter) Write(b []byte) (int, error) {
	w.count()
	return w.ResponseWriter.Write(b)
}

// WriteString implements gin.ResponseWriter.
func (w *withheldWriter) WriteString(s string) (int, error) {
	w.count()
	return w.ResponseWriter.WriteString(s)
}
