//go:build !unix

package store

import (
	"database/sql/driver"

	"github.com/mattn/go-sqlite3"
)

// writerDriver is d: without flock the stores sharing a database file
// wait for each other under SQLite's busy handler alone.
func writerDriver(d sqlite3.SQLiteDriver) driver.Driver { return &d }
