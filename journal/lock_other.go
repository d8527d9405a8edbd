//go:build !unix

package journal

import (
	"context"
	"errors"
	"os"
)

// lockDir needs flock(2): the file mirror runs on Unix systems only.
func lockDir(context.Context, *os.Root, string) (func(), error) {
	return nil, errors.New("journal: the file mirror needs a Unix system (flock)")
}
