package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/engram-memory/engram"
)

// importRecord is one parsed line of an import.
type importRecord struct {
	line  int
	table string
	cols  []string
	vals  map[string]any
}

// ImportTenant implements engram.TransferService. The stream is read and
// checked whole before anything is written (a bad line is EINVALID
// naming it), then written in one transaction: memory events get the
// tenant's next feed numbers in their exported order, so the index and
// every other follower see the imported memories, and the tenant's quotas
// are checked as for any write.
func (db *DB) ImportTenant(ctx context.Context, r io.Reader, ids string) (*engram.ImportResult, error) {
	tenant, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	if ids == "" {
		ids = engram.ImportRemap
	}
	if ids != engram.ImportRemap && ids != engram.ImportKeep {
		return nil, engram.Errorf(engram.EINVALID, "ids must be %q or %q", engram.ImportRemap, engram.ImportKeep)
	}
	kinds, err := db.columnKinds(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := readImport(r, kinds)
	if err != nil {
		return nil, err
	}
	res := &engram.ImportResult{IDs: ids, Records: map[string]int{}}
	if ids == engram.ImportRemap {
		res.Remapped = remapIDs(recs)
	}
	err = db.w.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(`SELECT name FROM tenants WHERE id = ?`, tenant).Scan(&res.Tenant).Error; err != nil {
			return fmt.Errorf("store: import: %w", err)
		}
		for _, table := range tenantTables {
			var n int64
			if err := tx.Table(table).Where("tenant_id = ?", tenant).Count(&n).Error; err != nil {
				return fmt.Errorf("store: import: %w", err)
			}
			if n > 0 && !(table == "memory_events" && db.onlyResetEvents(tx, tenant, n)) {
				return engram.Errorf(engram.ECONFLICT, "tenant %q is not empty (%s): import into a new tenant, or reset this one first", res.Tenant, table)
			}
		}
		var head int64
		if err := tx.Raw(`SELECT feed_seq FROM tenants WHERE id = ?`, tenant).Scan(&head).Error; err != nil {
			return fmt.Errorf("store: import: %w", err)
		}
		added := usage{}
		for _, rec := range recs {
			if err := db.insertRecord(tx, tenant, rec, &head); err != nil {
				return err
			}
			res.Records[recordTypes[rec.table]]++
			if valid, _ := rec.vals["valid"].(bool); rec.table == "memories" && valid {
				content, _ := rec.vals["content"].(string)
				added.Memories++
				added.Bytes += int64(len(content))
			} else if rec.table == "sessions" {
				added.Sessions++
			}
		}
		if err := tx.Exec(`UPDATE tenants SET feed_seq = ? WHERE id = ?`, head, tenant).Error; err != nil {
			return fmt.Errorf("store: import: %w", err)
		}
		// The vectors' save time is the import's end, however long it
		// took, so that other servers' partial reads see them.
		if err := tx.Exec(`UPDATE memory_vectors SET saved_at = ? WHERE tenant_id = ?`, db.now().UnixMilli(), tenant).Error; err != nil {
			return fmt.Errorf("store: import: %w", err)
		}
		return db.checkQuota(tx, tenant, added)
	})
	if err != nil {
		return nil, err
	}
	db.vectors.drop(tenant)
	return res, nil
}

// onlyResetEvents reports whether the tenant's n events are all reset
// markers (a tenant emptied by ResetTenant).
func (db *DB) onlyResetEvents(tx *gorm.DB, tenant string, n int64) bool {
	var resets int64
	return tx.Table("memory_events").Where("tenant_id = ? AND action = 'reset'", tenant).Count(&resets).Error == nil && resets == n
}

func (db *DB) insertRecord(tx *gorm.DB, tenant string, rec importRecord, head *int64) error {
	cols := append([]string{"tenant_id"}, rec.cols...)
	args := make([]any, 0, len(cols))
	args = append(args, tenant)
	for _, c := range rec.cols {
		args = append(args, rec.vals[c])
	}
	switch rec.table {
	case "memory_events":
		*head++
		if i := slices.Index(cols, "feed_seq"); i >= 0 {
			args[i] = *head
		} else {
			cols, args = append(cols, "feed_seq"), append(args, *head)
		}
	case "memory_vectors":
		i := slices.Index(cols, "memory_id")
		if i < 0 {
			return engram.Errorf(engram.EINVALID, "line %d: a memory_vector record needs memory_id", rec.line)
		}
		var seq []int64
		if err := tx.Raw(`SELECT seq FROM memories WHERE tenant_id = ? AND id = ?`, tenant, args[i]).Scan(&seq).Error; err != nil {
			return fmt.Errorf("store: import: %w", err)
		}
		if len(seq) == 0 {
			return engram.Errorf(engram.EINVALID, "line %d: memory_vector of unknown memory %v", rec.line, args[i])
		}
		cols[i], args[i] = "memory_seq", seq[0] // saved_at: stamped at the import's end
	}
	q := `INSERT INTO ` + rec.table + ` (` + strings.Join(cols, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(cols)-1) + `)`
	if err := tx.Exec(q, args...).Error; err != nil {
		if db.dialect.isUniqueViolation(err) {
			return engram.Errorf(engram.ECONFLICT, "line %d: the %s is already stored (import with ids=remap, or into an empty database)", rec.line, recordTypes[rec.table])
		}
		return engram.Errorf(engram.EINVALID, "line %d: the database refused the %s record: %s", rec.line, recordTypes[rec.table], firstLine(err.Error()))
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// columnKinds reads, for every tenant table, its columns and their kinds
// in this database.
func (db *DB) columnKinds(ctx context.Context) (map[string]map[string]int, error) {
	out := map[string]map[string]int{}
	for _, table := range tenantTables {
		rows, err := db.r.WithContext(ctx).Raw(`SELECT * FROM ` + table + ` WHERE 1 = 0`).Rows()
		if err != nil {
			return nil, fmt.Errorf("store: import: %w", err)
		}
		types, err := rows.ColumnTypes()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: import: %w", err)
		}
		out[table] = map[string]int{}
		for _, ct := range types {
			if !internalColumn(table, ct.Name()) || table == "memory_events" && ct.Name() == "feed_seq" {
				out[table][ct.Name()] = columnKind(ct.DatabaseTypeName())
			}
		}
		if table == "memory_vectors" {
			out[table]["memory_id"] = kindText
		}
	}
	return out, nil
}

// maxImportLine bounds one line of an import (a memory with its history
// is one line per event, each under the store's own limits).
const maxImportLine = 64 << 20

// readImport parses and checks every line: the header first, then
// records of known types with known fields of the right kinds.
func readImport(r io.Reader, kinds map[string]map[string]int) ([]importRecord, error) {
	tableOf := map[string]string{}
	for t, rt := range recordTypes {
		tableOf[rt] = t
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	var recs []importRecord
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if line == 1 {
			var h engram.ExportHeader
			if err := strictUnmarshal(b, &h); err != nil || h.Format != engram.ExportFormat {
				return nil, engram.Errorf(engram.EINVALID, "line 1: want the header {\"format\":%q,\"version\":%d,...}", engram.ExportFormat, engram.ExportVersion)
			}
			if h.Version != engram.ExportVersion {
				return nil, engram.Errorf(engram.EINVALID, "line 1: format version %d is not supported (this engram reads %d)", h.Version, engram.ExportVersion)
			}
			continue
		}
		var rec engram.ExportRecord
		if err := strictUnmarshal(b, &rec); err != nil {
			return nil, engram.Errorf(engram.EINVALID, "line %d: not a record {\"type\",\"data\"}: %s", line, err)
		}
		table, ok := tableOf[rec.Type]
		if !ok {
			return nil, engram.Errorf(engram.EINVALID, "line %d: unknown record type %q", line, rec.Type)
		}
		ir := importRecord{line: line, table: table, vals: map[string]any{}}
		for col, raw := range rec.Data {
			kind, ok := kinds[table][col]
			if !ok {
				return nil, engram.Errorf(engram.EINVALID, "line %d: a %s has no field %q", line, rec.Type, col)
			}
			v, err := importValue(kind, raw)
			if err != nil {
				return nil, engram.Errorf(engram.EINVALID, "line %d: %s.%s: %s", line, rec.Type, col, err)
			}
			ir.cols = append(ir.cols, col)
			ir.vals[col] = v
		}
		slices.Sort(ir.cols)
		recs = append(recs, ir)
	}
	if err := sc.Err(); err != nil {
		return nil, engram.Errorf(engram.EINVALID, "line %d: %s", line+1, err)
	}
	if line == 0 {
		return nil, engram.Errorf(engram.EINVALID, "line 1: the import is empty; want the export header first")
	}
	order := map[string]int{}
	for i, t := range tenantTables {
		order[t] = i
	}
	slices.SortStableFunc(recs, func(a, b importRecord) int { return order[a.table] - order[b.table] })
	return recs, nil
}

func strictUnmarshal(b []byte, dst any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}

func importValue(kind int, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	switch kind {
	case kindBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, errors.New("want true or false")
	case kindInt:
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
		}
		return nil, errors.New("want an integer")
	case kindFloat:
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				return f, nil
			}
		}
		return nil, errors.New("want a number")
	case kindTime:
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t.UTC(), nil
			}
		}
		return nil, errors.New("want an RFC 3339 time")
	case kindBytes:
		if s, ok := v.(string); ok {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				return b, nil
			}
		}
		return nil, errors.New("want base64")
	}
	s, ok := v.(string)
	if !ok {
		return nil, errors.New("want a string")
	}
	return s, nil
}

// remapIDs gives every record of a remapped table a new id of the same
// prefix and rewrites every string of every record with the new ids. It
// returns how many ids changed.
func remapIDs(recs []importRecord) int {
	var pairs []string
	for _, rec := range recs {
		if !slices.Contains(remapped, rec.table) {
			continue
		}
		old, _ := rec.vals["id"].(string)
		if old == "" {
			continue
		}
		prefix, _, ok := strings.Cut(old, "_")
		if !ok {
			prefix = recordTypes[rec.table][:3]
		}
		pairs = append(pairs, old, newID(prefix))
	}
	if len(pairs) == 0 {
		return 0
	}
	rep := strings.NewReplacer(pairs...)
	for _, rec := range recs {
		for c, v := range rec.vals {
			if s, ok := v.(string); ok {
				rec.vals[c] = rep.Replace(s)
			}
		}
	}
	return len(pairs) / 2
}
