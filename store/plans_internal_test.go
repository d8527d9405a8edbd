package store

import (
	"context"
	"testing"
)

// TestPostgresPlansWithValues: both pools of a PostgreSQL store plan each
// statement with its values (plan_cache_mode force_custom_plan), set
// after connecting, not as a startup parameter; a DSN that sets
// plan_cache_mode itself keeps its own.
func TestPostgresPlansWithValues(t *testing.T) {
	tk := internalTokens(t)
	ctx := context.Background()
	dsn := internalPostgresDSN(t)
	for _, tc := range []struct{ dsn, want string }{
		{dsn, "force_custom_plan"},
		{dsn + " plan_cache_mode=auto", "auto"},
	} {
		db, err := Open(ctx, Options{Driver: "postgres", DSN: tc.dsn, Tokens: tk, MaxOpenConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		var r, w string
		if err := db.r.Raw("SELECT current_setting('plan_cache_mode')").Row().Scan(&r); err != nil {
			t.Fatal(err)
		}
		if err := db.w.Raw("SELECT current_setting('plan_cache_mode')").Row().Scan(&w); err != nil {
			t.Fatal(err)
		}
		if r != tc.want || w != tc.want {
			t.Errorf("DSN %q: reader %q, writer %q, want %q", tc.dsn, r, w, tc.want)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
