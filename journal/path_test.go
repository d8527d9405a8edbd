package journal

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram"
)

func TestKeyPath(t *testing.T) {
	long := strings.Repeat("长", 70) // 210 bytes
	for _, c := range []struct{ key, want string }{
		{"/user/calendar/dentist", "index/user/calendar/dentist.json"},
		{"/user/calendar/2026-02-23_10-00_牙科复诊", "index/user/calendar/2026-02-23_10-00_牙科复诊.json"},
		{"/user/.hidden", "index/user/%2Ehidden.json"},
		{"/a/x.json/y", "index/a/x%2Ejson/y.json"},
		{"/a/x", "index/a/x.json"},
		{"/a/x.json", "index/a/x.json.json"},
		{"/notes/50%off", "index/notes/50%25off.json"},
		{`/w/a:b*c?"<>|\~`, "index/w/a%3Ab%2Ac%3F%22%3C%3E%7C%5C%7E.json"},
		{"/x/" + long, "index/x/" + strings.Repeat("长", 66) + "~"},
	} {
		got, err := KeyPath(c.key)
		if err != nil {
			t.Fatalf("%q: %v", c.key, err)
		}
		if !strings.HasPrefix(got, c.want) || (!strings.HasSuffix(c.want, "~") && got != c.want) {
			t.Errorf("KeyPath(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	for _, bad := range []string{"", "user", "/", "/a//b", "/a/", "/a/../b", "/./a"} {
		if p, err := KeyPath(bad); err == nil {
			t.Errorf("KeyPath(%q) = %q, want an error", bad, p)
		}
	}
}

// FuzzKeyPath writes a memory at whatever key the fuzzer finds through the
// mirror's own code, then removes it again, and checks that no file or
// directory ever appears outside the mirror's root, that the path is a
// plain local one of short names, and that it decodes back to the key (so
// two keys never share a file). The seeds run as an ordinary test.
func FuzzKeyPath(f *testing.F) {
	for _, seed := range []string{
		"/user/calendar/dentist", "/user/calendar/2026-02-23_10-00_牙科复诊", "/../../etc/passwd",
		"/a/../../b", "/a/..", "/..", "/.", "/a/./b", "//x", "/a//b", "/a/b/", "/a\x00b", "/a\nb", "/a\\..\\b",
		"/C:/Windows", "/a/x.json/y", "/%2e%2e/x", "/~/x", "/" + strings.Repeat("x", 300), "/" + strings.Repeat("%", 200),
		"/\xff\xfe", "/a/\u202e.json", "/.hidden/..x", "/ space /tab\t", "/con/nul/aux", "relative/key",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p, err := KeyPath(key)
		if err != nil {
			return
		}
		if !filepath.IsLocal(p) || path.Clean(p) != p || !strings.HasPrefix(p, "index/") {
			t.Fatalf("KeyPath(%q) = %q: not a clean path below index/", key, p)
		}
		for _, part := range strings.Split(p, "/") {
			if len(part) > 230 || part == "." || part == ".." || strings.HasPrefix(part, ".") || !utf8.ValidString(part) {
				t.Fatalf("KeyPath(%q) = %q: bad name %q", key, p, part)
			}
		}
		if dec, ok := decodeKeyPath(p); ok && dec != key {
			t.Fatalf("KeyPath(%q) = %q decodes to %q", key, p, dec)
		}

		outer := t.TempDir()
		dir := filepath.Join(outer, "mirror")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		tr, err := openTree(root, "t", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		m := &engram.Memory{ID: "mem_1", Key: key, Category: "life", Valid: true, Data: json.RawMessage(`{"text":"x"}`),
			Source: json.RawMessage(`"fuzz"`), Version: 1}
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if err := tr.apply(&engram.Change{Seq: 1, MemoryID: m.ID, Version: 1, Action: engram.ActionCreate, After: m, At: at}); err != nil {
			t.Fatalf("apply %q: %v", key, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "t", filepath.FromSlash(p))); err != nil {
			t.Fatalf("key %q: its file %q is missing: %v", key, p, err)
		}
		gone := *m
		gone.Valid, gone.Version = false, 2
		if err := tr.apply(&engram.Change{Seq: 2, MemoryID: m.ID, Version: 2, Action: engram.ActionTombstone, Before: m, After: &gone, At: at}); err != nil {
			t.Fatalf("tombstone %q: %v", key, err)
		}
		if err := tr.close(); err != nil {
			t.Fatal(err)
		}
		var files []string
		if err := filepath.WalkDir(outer, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(outer, q)
			if rel != "." && rel != "mirror" && !strings.HasPrefix(rel, "mirror"+string(filepath.Separator)) {
				t.Fatalf("key %q wrote %q outside the mirror root", key, q)
			}
			if !d.IsDir() {
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := []string{"mirror/t/log.jsonl"}
		if strings.Join(files, " ") != strings.Join(want, " ") {
			t.Fatalf("key %q: after the tombstone the mirror holds %q, want %q (index dirs left?)", key, files, want)
		}
	})
}

// decodeKeyPath inverts KeyPath for paths without shortened names.
func decodeKeyPath(p string) (string, bool) {
	if strings.Contains(p, "~") {
		return "", false
	}
	p = strings.TrimSuffix(strings.TrimPrefix(p, "index/"), ".json")
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '%' {
			n, _ := strconv.ParseUint(p[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(p[i])
	}
	return "/" + b.String(), true
}
