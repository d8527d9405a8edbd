// Package storetest opens real stores for tests: a SQLite file in a temp
// directory, and, when ENGRAM_TEST_POSTGRES_DSN is set, a fresh schema on
// that PostgreSQL server, dropped when the test ends.
package storetest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/store"
	"github.com/engram-memory/engram/tokens"
)

// PostgresEnv names the variable holding the test server's DSN.
const PostgresEnv = "ENGRAM_TEST_POSTGRES_DSN"

// RequirePostgresEnv, when set, makes a missing PostgresEnv a failure
// instead of a silent SQLite-only run (CI sets it).
const RequirePostgresEnv = "ENGRAM_TEST_REQUIRE_POSTGRES"

// Engines returns "sqlite", plus "postgres" when PostgresEnv is set.
func Engines() []string {
	if os.Getenv(PostgresEnv) != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// ForEachEngine runs fn as a subtest on every engine.
func ForEachEngine(t *testing.T, fn func(t *testing.T, engine string)) {
	if os.Getenv(RequirePostgresEnv) != "" && os.Getenv(PostgresEnv) == "" {
		t.Fatalf("%s is set but %s is not", RequirePostgresEnv, PostgresEnv)
	}
	for _, e := range Engines() {
		t.Run(e, func(t *testing.T) { fn(t, e) })
	}
}

var (
	tokOnce sync.Once
	tok     *tokens.Tokenizer
	tokErr  error
)

// Tokenizer returns the shared cl100k_base tokenizer.
func Tokenizer(tb testing.TB) *tokens.Tokenizer {
	tokOnce.Do(func() { tok, tokErr = tokens.New("cl100k_base") })
	if tokErr != nil {
		tb.Fatal(tokErr)
	}
	return tok
}

// Rules returns the write rules of the default configuration.
func Rules() engram.Rules {
	return engram.DefaultRules()
}

// Options returns store options for engine with a fresh database; the
// database is removed when tb ends. Callers may adjust them before Open.
func Options(tb testing.TB, engine string) store.Options {
	o := store.Options{
		Driver:       engine,
		DataDir:      tb.TempDir(),
		MaxOpenConns: 4,
		BusyTimeout:  5 * time.Second,
		Tokens:       Tokenizer(tb),
		Rules:        Rules(),
	}
	if engine == "postgres" {
		o.DSN = freshSchema(tb)
	}
	return o
}

// Open opens a store on a fresh database of engine.
func Open(tb testing.TB, engine string) *store.DB {
	return OpenWith(tb, Options(tb, engine))
}

// OpenWith opens a store with o and closes it when tb ends.
func OpenWith(tb testing.TB, o store.Options) *store.DB {
	db, err := store.Open(context.Background(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// freshSchema creates a uniquely named schema and returns a DSN whose
// search_path points at it; the schema is dropped when tb ends.
func freshSchema(tb testing.TB) string {
	base := os.Getenv(PostgresEnv)
	if base == "" {
		tb.Fatalf("%s is not set", PostgresEnv)
	}
	dsn, drop, err := store.FreshSchema(context.Background(), base, "engram_test_")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(drop)
	return dsn
}

// Tenant creates a tenant on db and returns a context acting for it.
func Tenant(tb testing.TB, db *store.DB, name string) context.Context {
	t, err := db.EnsureTenant(context.Background(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return engram.NewContextWithTenant(context.Background(), t.ID)
}
