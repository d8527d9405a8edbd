package store_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// These tests guard the migration files (migrations/README.md): the
// dialects hold the same names, the numbering has no gap but the known
// ones, and no file changes once it is listed in the golden checksums.

// knownGaps are the numbers no migration holds, and never will: a file
// numbered below the highest would run out of order on existing
// databases. migrations/README.md tells how each came about.
var knownGaps = map[int]string{
	14: "skipped when four branches merged with the numbers they chose (0011, 0012, 0013, 0015)",
}

// migrationName is NNNN_description.sql.
var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9]+(_[a-z0-9]+)*\.sql$`)

// migrationDialects returns the dialect directories under migrations/ and
// the files each holds, sorted.
func migrationDialects(t *testing.T) map[string][]string {
	t.Helper()
	dirs, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, err := os.ReadDir(path.Join("migrations", d.Name()))
		if err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, f := range files {
			names = append(names, f.Name())
		}
		slices.Sort(names)
		out[d.Name()] = names
	}
	for _, want := range []string{"sqlite", "postgres"} {
		if len(out[want]) == 0 {
			t.Fatalf("migrations/%s holds no migration", want)
		}
	}
	return out
}

// TestMigrationDialectsMatch fails when one dialect has a migration the
// other lacks: both are written in the same change, under the same name.
func TestMigrationDialectsMatch(t *testing.T) {
	dialects := migrationDialects(t)
	want := dialects["sqlite"]
	for d, names := range dialects {
		for _, n := range names {
			if !slices.Contains(want, n) {
				t.Errorf("migrations/%s/%s has no twin in migrations/sqlite: write every migration for both dialects, under the same name", d, n)
			}
		}
		for _, n := range want {
			if !slices.Contains(names, n) {
				t.Errorf("migrations/sqlite/%s has no twin in migrations/%s: write every migration for both dialects, under the same name", n, d)
			}
		}
	}
}

// TestMigrationNumbering fails on a malformed name, a number used twice,
// a gap that is not a known one, or a known gap that was filled.
func TestMigrationNumbering(t *testing.T) {
	for d, names := range migrationDialects(t) {
		used := map[int]string{}
		highest := 0
		for _, n := range names {
			m := migrationName.FindStringSubmatch(n)
			if m == nil {
				t.Errorf("migrations/%s/%s: want NNNN_description.sql (lower-case words joined by _)", d, n)
				continue
			}
			num, _ := strconv.Atoi(m[1])
			if other, ok := used[num]; ok {
				t.Errorf("migrations/%s: %s and %s share number %04d: give the newer one the next number after the highest", d, other, n, num)
			}
			used[num] = n
			highest = max(highest, num)
		}
		for num := 1; num <= highest; num++ {
			_, gap := knownGaps[num]
			switch n, ok := used[num]; {
			case gap && ok:
				t.Errorf("migrations/%s/%s fills the known gap %04d: a gap is never reused (it would run after %04d on existing databases); take number %04d", d, n, num, highest, highest+1)
			case !gap && !ok:
				t.Errorf("migrations/%s: no migration %04d: numbers follow the highest without a gap (migrations/README.md)", d, num)
			}
		}
	}
}

// TestMigrationsUnchanged fails when a migration file differs from its
// checksum in testdata/migrations.sha256, has none, or a listed file is
// gone.
func TestMigrationsUnchanged(t *testing.T) {
	const golden = "testdata/migrations.sha256"
	f, err := os.Open(golden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("%s:%d: want \"<sha256>  migrations/<dialect>/<file>\" (sha256sum's format), got %q", golden, line, sc.Text())
		}
		if _, dup := want[file]; dup {
			t.Errorf("%s:%d: %s is listed twice", golden, line, file)
		}
		want[file] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for d, names := range migrationDialects(t) {
		for _, n := range names {
			file := path.Join("migrations", d, n)
			seen[file] = true
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			switch w, ok := want[file]; {
			case !ok:
				t.Errorf("%s is not in %s: a new migration adds its line (cd store && sha256sum %s >> %s)", file, golden, file, golden)
			case w != hex.EncodeToString(sum[:]):
				t.Errorf("%s was edited: a migration that databases have applied must never change, since they would never see the edit; "+
					"restore it and write a new migration (the next number) that changes what it did", file)
			}
		}
	}
	for file := range want {
		if !seen[file] {
			t.Errorf("%s lists %s, which is gone: a database that applied it refuses to start without it; restore it", golden, file)
		}
	}
}
