package configs

import (
	"strings"
	"testing"
)

// The mirror's budget and margin are on by default, 0 turns them off,
// and a negative one is refused.
func TestMirrorBudgetKeys(t *testing.T) {
	c := Default()
	if c.Mirror.MaxFiles != 50000 || c.Mirror.MinFreeBytes != 1<<30 {
		t.Fatalf("defaults: %+v", c.Mirror)
	}
	cfg, err := Load("", []string{"ENGRAM_MIRROR_MAX_FILES=0", "ENGRAM_MIRROR_MIN_FREE_BYTES=0"})
	if err != nil || cfg.Mirror.MaxFiles != 0 || cfg.Mirror.MinFreeBytes != 0 {
		t.Fatalf("0 turns them off: %+v %v", cfg.Mirror, err)
	}
	c.Mirror.MaxFiles, c.Mirror.MinFreeBytes = -1, -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "max_files and min_free_bytes") {
		t.Fatalf("negative budget and margin: %v", err)
	}
}
