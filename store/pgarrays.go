package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"gorm.io/gorm"
)

// inList is the condition "column IN values" for g's engine, with the
// argument to bind for it. On PostgreSQL it is "column = ANY(?)" with the
// values one array, so that the statement has one text whatever their
// number: a list of n parameters was a new text for every n, which the
// driver's cache of prepared statements (512 a connection) could not
// hold once recalls of a few hundred candidates had each made their own,
// so that most such statements were parsed, described (a round trip of
// their own) and planned again. On SQLite the values are one JSON array,
// read by json_each, for the same reason: each connection keeps its last
// 64 prepared statements, which one text a length did not fit, and
// binding a recall's few hundred helpfulness keys one by one cost as much
// as the lookups (a recall's helpfulness read took a quarter less CPU).
// The plans stay lookups by the list's index. No values matches nothing,
// as an empty list does.
func inList[T string | int64](g *gorm.DB, column string, values []T) (string, any) {
	if g.Dialector.Name() != "postgres" {
		b, _ := json.Marshal(values) // strings and integers always encode
		return column + " IN (SELECT value FROM json_each(?))", string(b)
	}
	a := pgtype.Array[T]{Elements: values, Valid: true}
	if len(values) > 0 {
		a.Dims = []pgtype.ArrayDimension{{Length: int32(len(values)), LowerBound: 1}}
	}
	return column + " = ANY(?)", a
}

// jsonText is a string column of insertRows that PostgreSQL stores as
// json.
type jsonText string

// insertRows runs insert (an INSERT INTO table (columns), without
// VALUES) for rows, then conflict (an ON CONFLICT clause, or ""). On
// PostgreSQL it is one statement of one text whatever the number of rows,
// each column sent as one array (SELECT … FROM unnest(…)), for the reason
// inList gives; SQLite runs it a row at a time in one prepared statement
// (see execEach). Every row holds the same types, in column order:
// string, jsonText, float64, int64, int, bool or time.Time.
func insertRows(tx *gorm.DB, insert, conflict string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	if tx.Dialector.Name() != "postgres" {
		_, err := execEach(tx, insert+" VALUES ("+strings.TrimSuffix(strings.Repeat("?, ", len(rows[0])), ", ")+")"+conflict, rows)
		return err
	}
	n := len(rows[0])
	params, names, selects := make([]string, n), make([]string, n), make([]string, n)
	arrays := make([]any, n)
	for j, v := range rows[0] {
		typ, cast, array, err := column(rows, j, v)
		if err != nil {
			return err
		}
		params[j] = fmt.Sprintf("$%d::%s[]", j+1, typ)
		names[j] = fmt.Sprintf("c%d", j+1)
		selects[j] = names[j] + cast
		arrays[j] = array
	}
	// Through the connection itself: gorm would spread the slices into
	// lists of parameters; the driver sends them as arrays.
	_, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context, insert+" SELECT "+strings.Join(selects, ", ")+
		" FROM unnest("+strings.Join(params, ", ")+") AS u("+strings.Join(names, ", ")+")"+conflict, arrays...)
	return err
}

// column is column j of rows as one slice, with its PostgreSQL array
// element type and the cast that stores it; v is its value in the first
// row.
func column(rows [][]any, j int, v any) (typ, cast string, array any, err error) {
	switch v.(type) {
	case string:
		return "text", "", columnOf[string](rows, j), nil
	case jsonText:
		return "text", "::json", columnOf[jsonText](rows, j), nil
	case float64:
		return "double precision", "", columnOf[float64](rows, j), nil
	case int64:
		return "bigint", "", columnOf[int64](rows, j), nil
	case int:
		return "bigint", "", columnOf[int](rows, j), nil
	case bool:
		return "boolean", "", columnOf[bool](rows, j), nil
	case time.Time:
		return "timestamptz", "", columnOf[time.Time](rows, j), nil
	}
	return "", "", nil, fmt.Errorf("store: insert rows: column %d holds a %T", j+1, v)
}

func columnOf[T any](rows [][]any, j int) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = r[j].(T)
	}
	return out
}
