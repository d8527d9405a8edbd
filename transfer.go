package engram

import (
	"context"
	"encoding/json"
	"io"
	"time"
)

// ExportFormat and ExportVersion name the record format of a tenant
// export (docs/export.md). The version changes when a record's meaning
// changes; new fields (user_id, say) come with new columns and need none.
const (
	ExportFormat  = "engram-export"
	ExportVersion = 1
)

// ExportHeader is the first line of an export.
type ExportHeader struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	Tenant     string    `json:"tenant"`
	Engine     string    `json:"engine"`
	ExportedAt time.Time `json:"exported_at"`
}

// ExportRecord is every other line: one stored row of one record type
// (ExportTypes), its fields named as the store's columns, without the
// tenant and internal row numbers. Times are RFC 3339 strings, binary
// values base64, JSON documents strings, absent values null.
type ExportRecord struct {
	Type string                     `json:"type"`
	Data map[string]json.RawMessage `json:"data"`
}

// Import id modes.
const (
	ImportRemap = "remap" // every id is replaced by a new one, references included
	ImportKeep  = "keep"  // ids are kept; ECONFLICT when one is taken
)

// ImportResult counts the records an import wrote, by type.
type ImportResult struct {
	Tenant   string         `json:"tenant"`
	IDs      string         `json:"ids"`
	Records  map[string]int `json:"records"`
	Remapped int            `json:"remapped"`
}

// TransferService exports and imports the tenant in the context.
type TransferService interface {
	// ExportTenant writes the header and every record of the tenant to w,
	// as JSON Lines, from one consistent snapshot.
	ExportTenant(ctx context.Context, w io.Writer) error
	// ImportTenant reads an export from r into the tenant, which must hold
	// no data, in one transaction: a bad line is EINVALID naming it, and
	// nothing is written. ids is ImportRemap or ImportKeep.
	ImportTenant(ctx context.Context, r io.Reader, ids string) (*ImportResult, error)
}
