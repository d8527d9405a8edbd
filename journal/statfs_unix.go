//go:build linux || darwin || freebsd

package journal

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// freeBytes returns the bytes available to unprivileged users on the
// file system of dir (statfs(2): blocks available times block size).
func freeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs: %w", err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
