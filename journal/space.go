package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// volume is the file system under the mirror, as the mirror's space rule
// sees it. The tests replace it (export_test.go) to fill a disk without
// filling one.
type volume interface {
	// free returns the bytes an unprivileged process may still write on
	// the file system that holds dir.
	free(dir string) (uint64, error)
	// write is told before n bytes are written to name; its error stands
	// for the write's own (ENOSPC, EDQUOT, EIO).
	write(name string, n int) error
}

// osVolume is the real file system.
type osVolume struct{}

func (osVolume) free(dir string) (uint64, error) { return freeBytes(dir) }

func (osVolume) write(string, int) error { return nil }

// errDiskLow is what a write that would take the disk below the margin
// fails with: the mirror waits (backing off) until there is room again.
var errDiskLow = errors.New("waiting for disk space")

// room fails with errDiskLow when writing n more bytes would leave less
// than mirror.min_free_bytes free on the mirror's file system. The margin
// is what keeps the mirror from taking back, within seconds, the space an
// operator freed after a disk filled: the store needs it first.
func (m *Mirror) room(n int) error {
	if m.cfg.MinFreeBytes <= 0 {
		return nil
	}
	// Before the first write the directory may not exist yet: its
	// nearest parent is on the same file system.
	dir := m.cfg.Dir
	free, err := m.vol.free(dir)
	for errors.Is(err, fs.ErrNotExist) && filepath.Dir(dir) != dir {
		dir = filepath.Dir(dir)
		free, err = m.vol.free(dir)
	}
	if err != nil {
		return fmt.Errorf("journal: free space of %s: %w", m.cfg.Dir, err)
	}
	if free < uint64(m.cfg.MinFreeBytes)+uint64(n) {
		return fmt.Errorf("journal: %w: %d bytes free on %s, mirror.min_free_bytes keeps %d", errDiskLow, free, m.cfg.Dir, m.cfg.MinFreeBytes)
	}
	return nil
}

// guard is every tree's guard: room for the write, then the write.
func (m *Mirror) guard(name string, n int) error {
	if err := m.room(n); err != nil {
		return err
	}
	if err := m.vol.write(name, n); err != nil {
		return fmt.Errorf("journal: write %s: %w", name, err)
	}
	return nil
}
