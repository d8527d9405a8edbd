package store

import (
	"strings"
	"sync/atomic"

	"gorm.io/gorm"
)

// CountStatements returns how many statements the writer ran through gorm
// while fn ran (reads and writes, savepoints included; the rows a
// prepared statement writes one at a time on SQLite are not counted).
func (db *DB) CountStatements(fn func()) int64 {
	return db.CountStatementsLike("", fn)
}

// CountStatementsLike is CountStatements for the statements whose SQL
// begins with prefix (case aside); counts of other prefixes may nest.
func (db *DB) CountStatementsLike(prefix string, fn func()) int64 {
	var n atomic.Int64
	count := func(s *gorm.DB) {
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(s.Statement.SQL.String())), strings.ToUpper(prefix)) {
			n.Add(1)
		}
	}
	cb := db.w.Callback()
	name := "engram:count_statements:" + prefix
	regs := []error{
		cb.Create().After("gorm:create").Register(name, count),
		cb.Query().After("gorm:query").Register(name, count),
		cb.Update().After("gorm:update").Register(name, count),
		cb.Delete().After("gorm:delete").Register(name, count),
		cb.Row().After("gorm:row").Register(name, count),
		cb.Raw().After("gorm:raw").Register(name, count),
	}
	for _, err := range regs {
		if err != nil {
			panic(err)
		}
	}
	defer func() {
		_ = cb.Create().Remove(name)
		_ = cb.Query().Remove(name)
		_ = cb.Update().Remove(name)
		_ = cb.Delete().Remove(name)
		_ = cb.Row().Remove(name)
		_ = cb.Raw().Remove(name)
	}()
	fn()
	return n.Load()
}
