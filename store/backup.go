package store

import (
	"context"
	"fmt"
	"os"

	"github.com/engram-memory/engram"
)

// Backup writes a consistent copy of the whole SQLite database (every
// tenant) to path with VACUUM INTO, while the store keeps serving: the
// copy is one read transaction's snapshot, written by SQLite itself, and
// is a database engram opens as it is. path must not exist. PostgreSQL is
// backed up with its own tools (pg_dump; docs/export.md): EUNSUPPORTED.
func (db *DB) Backup(ctx context.Context, path string) error {
	if db.dialect.name() != "sqlite" {
		return engram.Errorf(engram.EUNSUPPORTED, "engram backup copies SQLite; back PostgreSQL up with pg_dump (docs/export.md)")
	}
	if _, err := os.Stat(path); err == nil {
		return engram.Errorf(engram.ECONFLICT, "%s exists; a backup never overwrites", path)
	}
	// On the writer's connection: the readers' are read-only. Writes of
	// this process queue while the copy is written (readers go on).
	if err := db.w.WithContext(ctx).Exec(`VACUUM INTO ?`, path).Error; err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}
