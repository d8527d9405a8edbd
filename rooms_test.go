package engram_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a non-test Go file may hold: past it a
// file holds more than one concern, and a reader more than one sitting.
// Split a file that grows past it by concern, each new file named for
// what it holds (the same resource keeps the same file name in every
// layer), rather than raise the limit.
const maxFileLines = 500

// TestRooms fails when a non-test Go file of the module is longer than
// maxFileLines, naming every such file and its length. It walks the
// directories the go tool reads (not testdata, nor those starting with
// "." or "_"), whatever their build tags.
func TestRooms(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if n := bytes.Count(b, []byte("\n")); n > maxFileLines {
			t.Errorf("%s has %d lines, more than %d: split it by concern, one file per thing it holds", filepath.ToSlash(path), n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("found only %d Go files: is the test running at the module root?", checked)
	}
}
