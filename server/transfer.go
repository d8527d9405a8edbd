package server

import (
	"bufio"
	"errors"
	"mime"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/wire"
)

// ndjson is the media type of JSON Lines.
const ndjson = "application/x-ndjson"

// handleExport streams the key's tenant (docs/export.md). Errors before
// the first byte are the usual JSON errors; one after it cuts the stream
// short, which a reader sees as a truncated last line. The export reads
// with full rights: it is the tenant's data for its owner, and a key
// below secret clearance is refused.
func (s *Server) handleExport(c *gin.Context) {
	ctx := c.Request.Context()
	if r := engram.ReaderFromContext(ctx); r != nil && r.Clearance != engram.SecuritySecret {
		writeError(c, engram.Errorf(wire.EFORBIDDEN, "an export holds every memory: it needs a key of clearance secret"))
		return
	}
	c.Header("Content-Type", ndjson)
	c.Header("Content-Disposition", `attachment; filename="engram-export.jsonl"`)
	c.Status(http.StatusOK)
	if err := s.cfg.Transfer.ExportTenant(ctx, c.Writer); err != nil {
		if c.Writer.Written() {
			_ = c.Error(err)
			return
		}
		writeError(c, err)
	}
}

// handleImport loads an export into the key's (empty) tenant in one
// transaction; ?ids=remap (default) or keep.
func (s *Server) handleImport(c *gin.Context) {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != ndjson && mt != "application/jsonl" {
		writeError(c, engram.Errorf(engram.EUNSUPPORTED, "Content-Type must be %s", ndjson))
		return
	}
	for k := range c.Request.URL.Query() {
		if k != "ids" {
			writeError(c, engram.Errorf(engram.EINVALID, "unknown query parameter %q (want ids=remap or ids=keep)", k))
			return
		}
	}
	ctx := c.Request.Context()
	if r := engram.ReaderFromContext(ctx); r != nil && r.Clearance != engram.SecuritySecret {
		writeError(c, engram.Errorf(wire.EFORBIDDEN, "an import writes every level of memory: it needs a key of clearance secret"))
		return
	}
	body := http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.Limits.MaxImportBytes)
	res, err := s.cfg.Transfer.ImportTenant(ctx, bufio.NewReaderSize(body, 64<<10), c.Query("ids"))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			err = engram.Errorf(engram.ETOOLARGE, "the import is larger than %d bytes (limits.max_import_bytes)", s.cfg.Limits.MaxImportBytes)
		}
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// handleAdminExport and handleAdminImport are export and import of a
// tenant named in the path, for the admin key.
func (s *Server) handleAdminExport(c *gin.Context) {
	if s.cfg.Transfer == nil {
		writeError(c, engram.Errorf(engram.ENOTFOUND, "no such endpoint"))
		return
	}
	if s.adminTenant(c) {
		s.handleExport(c)
	}
}

func (s *Server) handleAdminImport(c *gin.Context) {
	if s.cfg.Transfer == nil {
		writeError(c, engram.Errorf(engram.ENOTFOUND, "no such endpoint"))
		return
	}
	if s.adminTenant(c) {
		s.handleImport(c)
	}
}
