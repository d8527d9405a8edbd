package store

import "testing"

// TestSchemaDSN: the search_path joins a URL's query, starts one, or
// follows key=value pairs.
func TestSchemaDSN(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://u@h/db":                 "postgres://u@h/db?search_path=s1",
		"postgres://u@h/db?sslmode=disable": "postgres://u@h/db?sslmode=disable&search_path=s1",
		"host=h dbname=db":                  "host=h dbname=db search_path=s1",
	} {
		if got := schemaDSN(dsn, "s1"); got != want {
			t.Errorf("schemaDSN(%q) = %q, want %q", dsn, got, want)
		}
	}
}
