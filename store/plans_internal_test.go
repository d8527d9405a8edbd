package store

import (
	"context"
	"os"
	"testing"

	"github.com/engram-memory/engram/tokens"
)

// TestPostgresPlansWithValues: both pools of a PostgreSQL store plan each
// statement with its values (plan_cache_mode force_custom_plan), set
// after connecting, not as a startup parameter; a DSN that sets
// plan_cache_mode itself keeps its own.
func TestPostgresPlansWithValues(t *testing.T) {
	base := os.Getenv("ENGRAM_TEST_POSTGRES_DSN")
	if base == "" {
		if os.Getenv("ENGRAM_TEST_REQUIRE_POSTGRES") != "" {
			t.Fatal("ENGRAM_TEST_REQUIRE_POSTGRES is set but ENGRAM_TEST_POSTGRES_DSN is not")
		}
		t.Skip("no PostgreSQL")
	}
	tk, err := tokens.New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dsn, drop, err := FreshSchema(ctx, base, "engram_test_")
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
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
