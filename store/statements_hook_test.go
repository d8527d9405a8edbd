package store

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// stmtCounter counts the writer's statements whose SQL begins with prefix.
type stmtCounter struct {
	prefix string
	n      atomic.Int64
}

// counters holds each open store's active counters (*DB → *counterSet).
var counters sync.Map

type counterSet struct {
	mu   sync.Mutex
	list []*stmtCounter
}

// init registers, on every store this test binary opens and before any of
// its goroutines starts, one callback per statement kind that feeds the
// counters active at the time; CountStatementsLike then adds and removes
// counters only, never gorm callbacks, which a running goroutine reads.
func init() {
	testHookOpen = func(db *DB) {
		set := &counterSet{}
		counters.Store(db, set)
		count := func(s *gorm.DB) {
			set.mu.Lock()
			list := set.list
			set.mu.Unlock()
			if len(list) == 0 {
				return
			}
			sql := strings.ToUpper(strings.TrimSpace(s.Statement.SQL.String()))
			for _, c := range list {
				if strings.HasPrefix(sql, c.prefix) {
					c.n.Add(1)
				}
			}
		}
		cb := db.w.Callback()
		const name = "engram:count_statements"
		for _, err := range []error{
			cb.Create().After("gorm:create").Register(name, count),
			cb.Query().After("gorm:query").Register(name, count),
			cb.Update().After("gorm:update").Register(name, count),
			cb.Delete().After("gorm:delete").Register(name, count),
			cb.Row().After("gorm:row").Register(name, count),
			cb.Raw().After("gorm:raw").Register(name, count),
		} {
			if err != nil {
				panic(err)
			}
		}
	}
}

// CountStatements returns how many statements the writer ran through gorm
// while fn ran (reads and writes, savepoints included; the rows a
// prepared statement writes one at a time on SQLite are not counted).
func (db *DB) CountStatements(fn func()) int64 {
	return db.CountStatementsLike("", fn)
}

// CountStatementsLike is CountStatements for the statements whose SQL
// begins with prefix (case aside); counts of other prefixes may nest.
func (db *DB) CountStatementsLike(prefix string, fn func()) int64 {
	v, ok := counters.Load(db)
	if !ok {
		panic("store: CountStatementsLike on a store opened before the test hook")
	}
	set := v.(*counterSet)
	c := &stmtCounter{prefix: strings.ToUpper(prefix)}
	set.mu.Lock()
	set.list = append(append([]*stmtCounter(nil), set.list...), c)
	set.mu.Unlock()
	defer func() {
		set.mu.Lock()
		list := make([]*stmtCounter, 0, len(set.list))
		for _, o := range set.list {
			if o != c {
				list = append(list, o)
			}
		}
		set.list = list
		set.mu.Unlock()
	}()
	fn()
	return c.n.Load()
}

// CheckpointTruncate is checkpointTruncate, for the external tests.
func (db *DB) CheckpointTruncate(ctx context.Context) error { return db.checkpointTruncate(ctx) }
