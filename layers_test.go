package engram_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/engram-memory/engram"

// leaves are the packages every layer may use: they import nothing of
// engram's.
var leaves = []string{module + "/analysis", module + "/tokens"}

// mayImport is the layering rule of DESIGN §2 ("one way down"): the root
// package holds the domain and imports the standard library only; every
// other package imports the root, the leaves and the kit (internal/...,
// which itself imports only those), never a sibling; the
// store's test harness opens the store, the index's puts an index over it;
// cmd/engram alone wires siblings together (and reads configs).
func mayImport(pkg, dep string) bool {
	switch {
	case pkg == module+"/cmd/engram":
		return true
	case slices.Contains(leaves, pkg):
		return false
	case pkg == module+"/store/storetest":
		return dep == module || slices.Contains(leaves, dep) || dep == module+"/store"
	case pkg == module+"/index/indextest":
		return dep == module || slices.Contains(leaves, dep) || dep == module+"/store" || dep == module+"/index"
	case pkg == module:
		return false
	case strings.HasPrefix(pkg, module+"/internal/"):
		return dep == module || slices.Contains(leaves, dep) || strings.HasPrefix(dep, module+"/internal/")
	}
	return dep == module || slices.Contains(leaves, dep) || strings.HasPrefix(dep, module+"/internal/")
}

// TestLayers fails when a package imports a sibling it may not, or the
// root package imports anything but the standard library. Test files are
// exempt: a test may wire real parts together.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "sqlite_fts5", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	n := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg, deps := fields[0], fields[1:]
		n++
		for _, dep := range deps {
			switch {
			case pkg == module && strings.Contains(strings.Split(dep, "/")[0], "."):
				t.Errorf("the root package imports %s: it may import the standard library only", dep)
			case dep != module && !strings.HasPrefix(dep, module+"/"):
			case !mayImport(pkg, dep):
				t.Errorf("%s imports %s: only cmd/engram wires sibling packages together (README, code map)", pkg, dep)
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list found %d packages:\n%s", n, out)
	}
}
