package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// dialect holds what differs between SQLite and PostgreSQL.
type dialect interface {
	name() string
	// checkFeatures fails with a clear message when the engine lacks
	// something engram needs.
	checkFeatures(g *gorm.DB) error
	// lockMigrations serialises migrations across processes.
	lockMigrations(tx *gorm.DB) error
	isUniqueViolation(err error) bool
	// uniqueRule says which unique rule a unique violation broke, for the
	// rules the store reacts to; ruleOther for any other.
	uniqueRule(err error) uniqueRule
	// isTransient reports a deadlock or serialization failure: the
	// transaction was rolled back whole and can simply run again.
	isTransient(err error) bool
	// forUpdate makes a read inside a transaction lock the rows it reads
	// until commit, so that concurrent read-modify-write cycles queue.
	forUpdate(g *gorm.DB) *gorm.DB
	// forUpdateSkipLocked is forUpdate that passes over the rows another
	// transaction holds instead of waiting for them.
	forUpdateSkipLocked(g *gorm.DB) *gorm.DB
	// matchAll is a WHERE clause true for memories containing every term.
	matchAll(terms []string) (string, any)
	// hasTag is a WHERE clause true for memories tagged tag.
	hasTag(tag string) (string, any)
	// unindexed wraps a column so that the planner does not pick an index
	// on it: SQLite, without statistics, believes any equality on an
	// indexed column is selective, and a tenant_id condition would make it
	// scan the whole tenant instead of looking up a short list of ids.
	unindexed(column string) string
	// byteLength is an expression for the size in bytes of a text or JSON
	// column (NULL stays NULL).
	byteLength(column string) string
	// rankedFTS is the engine's own ranked full-text query for a tenant:
	// any term matches, best first (benchmark reference, see BareFTS).
	rankedFTS(terms []string) (string, any)
}

// uniqueRule names the unique rules whose violation the store handles.
type uniqueRule int

const (
	ruleOther        uniqueRule = iota
	ruleDedupe                  // memories_dedupe: one live copy of a content per tenant, user, agent, category and level
	ruleKey                     // memories_tenant_key: one memory per key
	ruleEventVersion            // memory_events (memory_id, version): two writers made the same version
)

type sqliteDialect struct{}

func (sqliteDialect) name() string { return "sqlite" }

func (sqliteDialect) checkFeatures(g *gorm.DB) error {
	var n int
	err := g.Raw(`SELECT sqlite_compileoption_used('ENABLE_FTS5')`).Scan(&n).Error
	if err != nil || n != 1 {
		return errors.New("store: this binary's SQLite lacks FTS5; build with -tags sqlite_fts5 (make build does)")
	}
	return nil
}

// lockMigrations: the writer connection's BEGIN IMMEDIATE already holds
// SQLite's write lock for the whole transaction.
func (sqliteDialect) lockMigrations(*gorm.DB) error { return nil }

// forUpdate: SQLite has a single writer; the transaction already excludes
// every other writer.
func (sqliteDialect) forUpdate(g *gorm.DB) *gorm.DB { return g }

func (sqliteDialect) forUpdateSkipLocked(g *gorm.DB) *gorm.DB { return g }

// isTransient: SQLite's single writer cannot deadlock; lock waits end in
// busy_timeout errors, which are not worth an automatic retry.
func (sqliteDialect) isTransient(error) bool { return false }

func (sqliteDialect) isUniqueViolation(err error) bool {
	var e sqlite3.Error
	return errors.As(err, &e) && (e.ExtendedCode == sqlite3.ErrConstraintUnique || e.ExtendedCode == sqlite3.ErrConstraintPrimaryKey)
}

// uniqueRule reads the rule from the columns SQLite names: its error
// carries no index name, only "UNIQUE constraint failed: table.column, …".
func (d sqliteDialect) uniqueRule(err error) uniqueRule {
	var e sqlite3.Error
	if !d.isUniqueViolation(err) || !errors.As(err, &e) {
		return ruleOther
	}
	_, cols, _ := strings.Cut(e.Error(), "constraint failed: ")
	switch cols {
	case "memories.tenant_id, memories.user_id, memories.agent_id, memories.category, memories.security_level, memories.content_hash":
		return ruleDedupe
	case "memories.tenant_id, memories.user_id, memories.key":
		return ruleKey
	case "memory_events.memory_id, memory_events.version":
		return ruleEventVersion
	}
	return ruleOther
}

// matchAll quotes every term as an FTS5 string ("..." with " doubled), so
// no query text can be read as FTS5 syntax (AND, NEAR, *, -, column:).
func (sqliteDialect) matchAll(terms []string) (string, any) {
	return `memories.seq IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)`, ftsQuery(terms, " AND ")
}

func ftsQuery(terms []string, op string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(q, op)
}

// unindexed: a unary plus is SQLite's documented way to keep a term from
// driving an index.
func (sqliteDialect) unindexed(column string) string { return "+" + column }

func (sqliteDialect) byteLength(column string) string { return "LENGTH(CAST(" + column + " AS BLOB))" }

func (sqliteDialect) rankedFTS(terms []string) (string, any) {
	return `SELECT memories.seq FROM memories_fts JOIN memories ON memories.seq = memories_fts.rowid
		WHERE memories_fts MATCH ? AND memories.tenant_id = ? ORDER BY memories_fts.rank LIMIT ?`, ftsQuery(terms, " OR ")
}

func (sqliteDialect) hasTag(tag string) (string, any) {
	return `EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE json_each.value = ?)`, tag
}

type postgresDialect struct{}

func (postgresDialect) name() string { return "postgres" }

func (postgresDialect) checkFeatures(*gorm.DB) error { return nil }

// migrationLockID is an arbitrary constant naming engram's advisory lock.
const migrationLockID = 0x656e6772616d // "engram"

func (postgresDialect) lockMigrations(tx *gorm.DB) error {
	return tx.Exec(`SELECT pg_advisory_xact_lock(?)`, int64(migrationLockID)).Error
}

func (postgresDialect) forUpdate(g *gorm.DB) *gorm.DB {
	return g.Clauses(clause.Locking{Strength: "UPDATE"})
}

func (postgresDialect) forUpdateSkipLocked(g *gorm.DB) *gorm.DB {
	return g.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
}

func (postgresDialect) isTransient(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && (e.Code == "40P01" || e.Code == "40001")
}

func (postgresDialect) isUniqueViolation(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23505"
}

func (d postgresDialect) uniqueRule(err error) uniqueRule {
	var e *pgconn.PgError
	if !errors.As(err, &e) || e.Code != "23505" {
		return ruleOther
	}
	switch e.ConstraintName {
	case "memories_dedupe":
		return ruleDedupe
	case "memories_tenant_key":
		return ruleKey
	case "memory_events_memory_id_version_key":
		return ruleEventVersion
	}
	return ruleOther
}

// matchAll builds the tsquery from quoted lexemes ('...' with ' doubled),
// so no query text can be read as tsquery syntax.
func (postgresDialect) matchAll(terms []string) (string, any) {
	return `memories.search_vector @@ to_tsquery('simple', ?)`, tsQuery(terms, " & ")
}

func tsQuery(terms []string, op string) string {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = fmt.Sprintf("'%s'", strings.ReplaceAll(strings.ReplaceAll(t, `\`, `\\`), `'`, `''`))
	}
	return strings.Join(q, op)
}

// unindexed: PostgreSQL plans from statistics and needs no hint.
func (postgresDialect) unindexed(column string) string { return column }

func (postgresDialect) byteLength(column string) string { return "octet_length(" + column + "::text)" }

func (postgresDialect) rankedFTS(terms []string) (string, any) {
	return `SELECT seq FROM memories, to_tsquery('simple', ?) AS q
		WHERE search_vector @@ q AND tenant_id = ? ORDER BY ts_rank(search_vector, q) DESC LIMIT ?`, tsQuery(terms, " | ")
}

func (postgresDialect) hasTag(tag string) (string, any) {
	b, _ := json.Marshal([]string{tag})
	return `memories.tags @> ?::jsonb`, string(b)
}

// execEach runs query once for each list of args, in one statement
// prepared in tx, and returns the rows each run affected. On SQLite this
// is cheaper than one statement of many rows: there is no round trip to
// save, and SQLite parses a statement of several hundred parameters anew
// each time (the driver keeps no prepared statements), which cost a
// feedback more than its writes. PostgreSQL keeps the multi-row
// statements: there each statement is a round trip.
func execEach(tx *gorm.DB, query string, args [][]any) ([]int64, error) {
	ctx := tx.Statement.Context
	stmt, err := tx.Statement.ConnPool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	affected := make([]int64, len(args))
	for i, a := range args {
		res, err := stmt.ExecContext(ctx, a...)
		if err != nil {
			return nil, err
		}
		if affected[i], err = res.RowsAffected(); err != nil {
			return nil, err
		}
	}
	return affected, nil
}
