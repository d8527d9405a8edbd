package store

import (
	"context"
	"testing"
)

// TestAnalyzeTables: on PostgreSQL every table of the store's schema has
// been analysed once AnalyzeTables returns (and no table of another
// schema needs to be); on SQLite it does nothing and succeeds.
func TestAnalyzeTables(t *testing.T) {
	tk := internalTokens(t)
	ctx := context.Background()
	lite, err := Open(ctx, Options{Driver: "sqlite", DSN: t.TempDir() + "/e.db", Tokens: tk})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if err := lite.AnalyzeTables(ctx); err != nil {
		t.Errorf("sqlite: %v", err)
	}
	db, err := Open(ctx, Options{Driver: "postgres", DSN: internalPostgresDSN(t), Tokens: tk, MaxOpenConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.AnalyzeTables(ctx); err != nil {
		t.Fatal(err)
	}
	var tables, unanalysed int64
	if err := db.r.Raw(`SELECT COUNT(*), COUNT(*) FILTER (WHERE a.last_analyze IS NULL) FROM pg_tables t
		LEFT JOIN pg_stat_user_tables a ON a.schemaname = t.schemaname AND a.relname = t.tablename
		WHERE t.schemaname = current_schema()`).Row().Scan(&tables, &unanalysed); err != nil {
		t.Fatal(err)
	}
	if tables < 10 || unanalysed != 0 {
		t.Errorf("%d of the schema's %d tables not analysed", unanalysed, tables)
	}
}

// TestMemoriesFillfactor: on PostgreSQL memory pages keep room for the
// heap-only updates of credits (migration 0026).
func TestMemoriesFillfactor(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, Options{Driver: "postgres", DSN: internalPostgresDSN(t), Tokens: internalTokens(t), MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var opts string
	if err := db.r.Raw(`SELECT COALESCE(array_to_string(reloptions, ','), '') FROM pg_class
		WHERE oid = to_regclass(current_schema() || '.memories')`).Row().Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if opts != "fillfactor=80" {
		t.Errorf("memories has options %q, want fillfactor=80", opts)
	}
}
