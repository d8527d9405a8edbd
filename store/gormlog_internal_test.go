package store

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestLoggedStatementsHoldNoValues: a failing statement is logged with
// its SQL and placeholders, never with the values bound to it (a memory's
// text, a query, a key's hash).
func TestLoggedStatementsHoldNoValues(t *testing.T) {
	var buf bytes.Buffer
	db, err := Open(context.Background(), Options{Driver: "sqlite", DSN: t.TempDir() + "/e.db", Tokens: internalTokens(t),
		Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.w.Exec("UPDATE memories SET no_such_column = 1 WHERE content = ?", "the user's secret diagnosis").Error; err == nil {
		t.Fatal("a statement on a missing column did not fail")
	}
	logged := buf.String()
	if !strings.Contains(logged, "no_such_column") {
		t.Fatalf("the failed statement was not logged: %q", logged)
	}
	if strings.Contains(logged, "secret diagnosis") {
		t.Errorf("the log holds a bound value: %q", logged)
	}
}
