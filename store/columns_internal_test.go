package store

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm/schema"
)

// TestChangedColumns changes each field of memoryColumns alone and wants
// its column back (and the search text with the columns it is made of),
// so memoryFields stays in step with memoryColumns and the row struct. The
// search text alone, which a read leaves empty, is no change.
func TestChangedColumns(t *testing.T) {
	if len(memoryFields) != len(memoryColumns) {
		t.Fatalf("%d fields for %d columns", len(memoryFields), len(memoryColumns))
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := "x"
	base := memoryRow{Key: &s, Data: &s, Source: &s, ExpiresAt: &at, ReinforcedAt: &at, OccurredAt: &at, UpdatedAt: at}
	names := schema.NamingStrategy{}
	for _, col := range memoryColumns {
		next := base
		v := reflect.ValueOf(&next).Elem()
		var field reflect.Value
		for i := range v.NumField() {
			if names.ColumnName("", v.Type().Field(i).Name) == col {
				field = v.Field(i)
			}
		}
		if !field.IsValid() {
			t.Fatalf("no field for column %s", col)
		}
		switch p := field.Addr().Interface().(type) {
		case *string:
			*p = "changed"
		case **string:
			*p = nil
		case *float64:
			*p = 0.5
		case *int64:
			*p = 7
		case *int:
			*p = 7
		case *bool:
			*p = true
		case *time.Time:
			*p = at.Add(time.Second)
		case **time.Time:
			later := at.Add(time.Second)
			*p = &later
		default:
			t.Fatalf("column %s: unhandled type %T", col, p)
		}
		got := changedColumns(&base, &next)
		want := map[string]bool{col: true}
		if slices.Contains(searchSources, col) {
			// The search text is derived, so it is written again.
			want["search_body"], want["search_meta"] = true, true
		}
		for c := range got {
			if !want[c] {
				t.Errorf("changing %s: changed %s too", col, c)
			}
		}
		_, ok := got[col]
		switch {
		case col == "search_body" || col == "search_meta":
			if len(got) != 0 {
				t.Errorf("changing %s alone: changed %v", col, got)
			}
		case !ok:
			t.Errorf("changing %s: changed %v", col, got)
		}
	}
	// The same instant in another zone, and equal strings behind
	// different pointers, are no change.
	same := base
	local := at.In(time.FixedZone("x", 3600))
	s2 := "x"
	same.UpdatedAt, same.ExpiresAt, same.Key = local, &local, &s2
	if got := changedColumns(&base, &same); len(got) != 0 {
		t.Errorf("no change: changed %v", got)
	}
}
