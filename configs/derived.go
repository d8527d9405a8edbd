package configs

import (
	"path/filepath"

	"github.com/engram-memory/engram"
)

// MirrorOn reports whether the file mirror runs: mirror.enabled, where
// "auto" means on with SQLite only.
func (c Config) MirrorOn() bool {
	return c.Mirror.Enabled == "true" || c.Mirror.Enabled == "auto" && c.Store.Driver == "sqlite"
}

// MirrorDir is where the file mirror lives.
func (c Config) MirrorDir() string {
	if c.Mirror.Dir != "" {
		return c.Mirror.Dir
	}
	return filepath.Join(c.DataDir, "mirror")
}

// Rules returns the write rules (validation and defaults) of c.
func (c Config) Rules() engram.Rules {
	return engram.Rules{Memory: c.Memory, Limits: c.Limits, Scoring: c.Scoring}
}
