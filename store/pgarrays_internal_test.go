package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// arrayStores opens a SQLite and (when there is one) a PostgreSQL store
// whose pools hold one connection each, so that a statement prepared by
// one read is visible to the next.
func arrayStores(t *testing.T) map[string]*DB {
	t.Helper()
	ctx := context.Background()
	stores := map[string]*DB{}
	for _, o := range []Options{
		{Driver: "sqlite", DSN: t.TempDir() + "/e.db"},
		{Driver: "postgres", DSN: internalPostgresDSN(t)},
	} {
		o.Tokens, o.MaxOpenConns = internalTokens(t), 1
		db, err := Open(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		stores[o.Driver] = db
	}
	return stores
}

// TestInList: a list condition finds exactly the rows listed, none for an
// empty list, and on PostgreSQL lists of any length are one statement
// text, prepared once on the connection.
func TestInList(t *testing.T) {
	for engine, db := range arrayStores(t) {
		t.Run(engine, func(t *testing.T) {
			for _, n := range []string{"in-a", "in-b", "in-c"} {
				if err := db.w.Exec(`INSERT INTO settings (name, value) VALUES (?, 'x')`, n).Error; err != nil {
					t.Fatal(err)
				}
			}
			for _, names := range [][]string{{"in-a"}, {"in-a", "in-c"}, {"in-a", "in-b", "in-c", "in-z"}, {}} {
				in, list := inList(db.r, "name", names)
				var got []string
				if err := db.r.Raw(`SELECT name FROM settings WHERE `+in+` ORDER BY name`, list).Find(&got).Error; err != nil {
					t.Fatal(err)
				}
				want := min(len(names), 3)
				if len(got) != want {
					t.Errorf("%v found %v", names, got)
				}
			}
			if engine != "postgres" {
				return
			}
			var prepared int64
			if err := db.r.Raw(`SELECT COUNT(*) FROM pg_prepared_statements WHERE statement LIKE 'SELECT name FROM settings WHERE name%'`).
				Row().Scan(&prepared); err != nil {
				t.Fatal(err)
			}
			if prepared != 1 {
				t.Errorf("lists of four lengths were %d prepared statements, want 1", prepared)
			}
		})
	}
}

// TestInsertRows: rows of every column type insertRows takes are
// inserted as given, the conflict clause applies, and on PostgreSQL a
// type it cannot send as an array is an error, with nothing inserted.
func TestInsertRows(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for engine, db := range arrayStores(t) {
		t.Run(engine, func(t *testing.T) {
			kinds := map[string]string{"sqlite": "REAL", "postgres": "DOUBLE PRECISION"}
			stamp := map[string]string{"sqlite": "TIMESTAMP", "postgres": "TIMESTAMPTZ"}
			if err := db.w.Exec(`CREATE TABLE rows_test (s TEXT PRIMARY KEY, f ` + kinds[engine] + `, i BIGINT, n INTEGER, b BOOLEAN, t ` +
				stamp[engine] + `)`).Error; err != nil {
				t.Fatal(err)
			}
			insert := `INSERT INTO rows_test (s, f, i, n, b, t)`
			conflict := ` ON CONFLICT (s) DO UPDATE SET i = rows_test.i + excluded.i`
			rows := [][]any{{"a", 1.5, int64(1), 1, true, at}, {"b", -2.0, int64(2), 2, false, at.Add(time.Hour)}}
			err := db.w.Transaction(func(tx *gorm.DB) error {
				if err := insertRows(tx, insert, conflict, rows); err != nil {
					return err
				}
				return insertRows(tx, insert, conflict, rows[:1])
			})
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				S string
				F float64
				I int64
				N int
				B bool
				T time.Time
			}
			var got []row
			if err := db.r.Raw(`SELECT s, f, i, n, b, t FROM rows_test ORDER BY s`).Find(&got).Error; err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].I != 2 || got[1].I != 2 || got[0].F != 1.5 || got[1].N != 2 || !got[0].B || got[1].B ||
				!got[1].T.Equal(at.Add(time.Hour)) {
				t.Errorf("rows %+v", got)
			}
			if engine != "postgres" {
				return
			}
			err = db.w.Transaction(func(tx *gorm.DB) error {
				return insertRows(tx, insert, "", [][]any{{"c", 1.0, int64(1), 1, true, []byte("t")}})
			})
			if err == nil || !strings.Contains(err.Error(), "column 6") {
				t.Errorf("a column of bytes: %v", err)
			}
		})
	}
}
