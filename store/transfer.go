package store

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

var _ engram.TransferService = (*DB)(nil)

// recordTypes names the record type of each table in tenantTables.
var recordTypes = map[string]string{
	"memories": "memory", "memory_events": "memory_event", "memory_aliases": "memory_alias", "memory_links": "memory_link", "memory_vectors": "memory_vector",
	"recalls": "recall", "interactions": "interaction", "feedback": "feedback", "feedback_pending": "pending_feedback",
	"feedback_credits": "feedback_credit", "pairs": "pair", "reflections": "reflection",
	"reflection_versions": "reflection_version", "sessions": "session", "session_events": "session_event",
	"working_states": "working_state", "memory_help": "memory_help", "rater_reputation": "rater_reputation",
}

// remapped are the tables whose id column an import in ImportRemap mode
// replaces (ids that are unique across tenants); every string of every
// record then has the old ids replaced by the new ones, which rewrites
// the references in other records, in JSON documents and in reflections'
// Markdown alike.
var remapped = []string{"memories", "recalls", "interactions", "feedback", "feedback_pending", "pairs", "reflections"}

// exportOrder orders each table's rows in an export.
var exportOrder = map[string]string{
	"memories": "seq", "memory_events": "feed_seq, id", "memory_aliases": "created_at, user_id, alias", "memory_links": "from_id, to_id, relation", "memory_vectors": "memory_id", "feedback": "seq", "feedback_pending": "seq",
	"interactions": "seq", "pairs": "seq", "reflections": "seq", "reflection_versions": "reflection_id, version",
	"session_events": "session_id, seq", "feedback_credits": "feedback_id, memory_id",
}

// internalColumn reports whether a column stays out of an export: the
// tenant, row numbers the database gives, and what it derives.
func internalColumn(table, col string) bool {
	switch col {
	case "tenant_id", "search_vector":
		return true
	case "seq":
		return table != "session_events"
	case "id":
		return table == "memory_events"
	case "memory_seq", "saved_at": // a vector's save time is the importing store's
		return table == "memory_vectors"
	}
	return false
}

// exportSelect is the statement that reads a table's rows of a tenant.
// Vectors are named by their memory's id, not its row number. The reset
// marker events (feedGap) stay out: they belong to the feed, not the data.
func exportSelect(table string) string {
	switch table {
	case "memory_vectors":
		return `SELECT v.*, m.id AS memory_id FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq WHERE v.tenant_id = ? ORDER BY m.seq`
	case "memory_events":
		return `SELECT * FROM memory_events WHERE tenant_id = ? AND action <> 'reset' ORDER BY feed_seq, id`
	}
	q := `SELECT * FROM ` + table + ` WHERE tenant_id = ?`
	if o, ok := exportOrder[table]; ok {
		q += ` ORDER BY ` + o
	}
	return q
}

// ExportTenant implements engram.TransferService. Every table is read in
// one read transaction, so the export is one consistent snapshot while
// writers go on.
func (db *DB) ExportTenant(ctx context.Context, w io.Writer) error {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return err
	}
	// SQLite's deferred transaction reads one snapshot of the WAL from
	// its first read; PostgreSQL needs repeatable read for that.
	var opts []*sql.TxOptions
	if db.dialect.name() == "postgres" {
		opts = append(opts, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	err = db.r.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var names []string
		if err := tx.Raw(`SELECT name FROM tenants WHERE id = ?`, tenant).Scan(&names).Error; err != nil {
			return fmt.Errorf("store: export: %w", err)
		}
		if len(names) == 0 {
			return engram.Errorf(engram.ENOTFOUND, "tenant not found")
		}
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(engram.ExportHeader{Format: engram.ExportFormat, Version: engram.ExportVersion, Tenant: names[0],
			Engine: db.dialect.name(), ExportedAt: db.now().UTC()}); err != nil {
			return err
		}
		for _, table := range tenantTables {
			if err := exportTable(tx, exportSelect(table), table, tenant, enc); err != nil {
				return err
			}
		}
		return nil
	}, opts...)
	if err != nil {
		return err
	}
	return bw.Flush()
}

func exportTable(tx *gorm.DB, query, table, tenant string, enc *json.Encoder) error {
	rows, err := tx.Raw(query, tenant).Rows()
	if err != nil {
		return fmt.Errorf("store: export %s: %w", table, err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return fmt.Errorf("store: export %s: %w", table, err)
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("store: export %s: %w", table, err)
		}
		data := make(map[string]any, len(types))
		for i, ct := range types {
			if internalColumn(table, ct.Name()) {
				continue
			}
			data[ct.Name()] = exportValue(columnKind(ct.DatabaseTypeName()), vals[i])
		}
		if err := enc.Encode(map[string]any{"type": recordTypes[table], "data": data}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: export %s: %w", table, err)
	}
	return nil
}

// Column kinds, from the database's type names of both engines.
const (
	kindText = iota
	kindInt
	kindFloat
	kindBool
	kindTime
	kindBytes
)

func columnKind(dbType string) int {
	switch t := strings.ToUpper(dbType); {
	case t == "BOOLEAN" || t == "BOOL":
		return kindBool
	case strings.Contains(t, "INT"):
		return kindInt
	case t == "REAL" || strings.HasPrefix(t, "FLOAT") || strings.HasPrefix(t, "DOUBLE") || t == "NUMERIC":
		return kindFloat
	case strings.HasPrefix(t, "TIMESTAMP") || t == "DATETIME" || t == "DATE":
		return kindTime
	case t == "BLOB" || t == "BYTEA":
		return kindBytes
	}
	return kindText
}

func exportValue(kind int, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		if kind == kindBytes {
			return base64.StdEncoding.EncodeToString(x)
		}
		return string(x)
	case int64:
		if kind == kindBool {
			return x != 0
		}
	}
	return v
}
