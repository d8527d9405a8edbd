package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// FreshSchema creates a new schema, prefix and a random suffix, on the
// PostgreSQL of dsn, and returns a DSN whose search_path points at it and
// a function that drops it: a fresh database beside others on one server,
// for tests and benchmarks.
func FreshSchema(ctx context.Context, dsn, prefix string) (string, func(), error) {
	admin, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return "", nil, fmt.Errorf("store: open postgres: %w", err)
	}
	closeAdmin := func() {
		if s, err := admin.DB(); err == nil {
			_ = s.Close()
		}
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := prefix + hex.EncodeToString(b)
	if err := admin.WithContext(ctx).Exec("CREATE SCHEMA " + schema).Error; err != nil {
		closeAdmin()
		return "", nil, fmt.Errorf("store: create schema: %w", err)
	}
	drop := func() {
		_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
		closeAdmin()
	}
	return schemaDSN(dsn, schema), drop, nil
}

// schemaDSN is dsn with its search_path set to schema, in either DSN form:
// a URL or key=value pairs.
func schemaDSN(dsn, schema string) string {
	if strings.Contains(dsn, "://") {
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		return dsn + sep + "search_path=" + schema
	}
	return dsn + " search_path=" + schema
}
