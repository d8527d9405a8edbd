package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
)

//go:embed migrations
var migrationFS embed.FS

// migrations returns the dialect's migration files in order. Names are
// NNNN_description.sql; the list is append-only, a file is never edited
// once merged, and a gap in the numbering (0014) is never filled:
// migrations/README.md gives the rules and the history of the gap, and
// migrate_test.go checks them.
func migrations(d dialect) ([]string, error) {
	dir := "migrations/" + d.name()
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// migrate applies the migrations not yet recorded in schema_migrations,
// all in one transaction under a lock, so that several engram processes
// starting together on one PostgreSQL apply each migration once, and a
// failed migration leaves the schema as it was. A process that finds a
// newer schema than it knows refuses to start rather than run against it.
func migrate(ctx context.Context, g *gorm.DB, d dialect) error {
	if err := d.checkFeatures(g.WithContext(ctx)); err != nil {
		return err
	}
	names, err := migrations(d)
	if err != nil {
		return fmt.Errorf("store: read migrations: %w", err)
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	return g.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := d.lockMigrations(tx); err != nil {
			return fmt.Errorf("store: lock migrations: %w", err)
		}
		if err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMP NOT NULL)`).Error; err != nil {
			return fmt.Errorf("store: migrations table: %w", err)
		}
		var applied []string
		if err := tx.Raw(`SELECT name FROM schema_migrations ORDER BY name`).Scan(&applied).Error; err != nil {
			return fmt.Errorf("store: read applied migrations: %w", err)
		}
		done := map[string]bool{}
		for _, n := range applied {
			if !known[n] {
				return fmt.Errorf("store: database has migration %s that this engram does not know; upgrade engram", n)
			}
			done[n] = true
		}
		for _, name := range names {
			if done[name] {
				continue
			}
			body, err := migrationFS.ReadFile("migrations/" + d.name() + "/" + name)
			if err != nil {
				return err
			}
			if err := tx.Exec(string(body)).Error; err != nil {
				return fmt.Errorf("store: migration %s: %w", name, err)
			}
			if err := tx.Exec(`INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`, name, time.Now().UTC()).Error; err != nil {
				return fmt.Errorf("store: record migration %s: %w", name, err)
			}
		}
		return nil
	})
}
