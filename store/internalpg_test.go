package store

import (
	"context"
	"os"
	"testing"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/tokens"
)

// internalTokens is the token counter of the store's internal tests.
func internalTokens(t *testing.T) engram.TokenCounter {
	t.Helper()
	tk, err := tokens.New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// internalPostgresDSN returns the DSN of a fresh schema of the test
// PostgreSQL (ENGRAM_TEST_POSTGRES_DSN), dropped when t ends; without
// one it skips t, unless ENGRAM_TEST_REQUIRE_POSTGRES is set. (The
// internal tests cannot use storetest, which imports this package.)
func internalPostgresDSN(t *testing.T) string {
	t.Helper()
	base := os.Getenv("ENGRAM_TEST_POSTGRES_DSN")
	if base == "" {
		if os.Getenv("ENGRAM_TEST_REQUIRE_POSTGRES") != "" {
			t.Fatal("ENGRAM_TEST_REQUIRE_POSTGRES is set but ENGRAM_TEST_POSTGRES_DSN is not")
		}
		t.Skip("no PostgreSQL")
	}
	dsn, drop, err := FreshSchema(context.Background(), base, "engram_test_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return dsn
}
