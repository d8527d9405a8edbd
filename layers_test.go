package engram_test

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/engram-memory/engram"

// leaves are the packages every layer may use: they import nothing of
// engram's.
var leaves = []string{module + "/analysis", module + "/tokens"}

// kit is the prefix of the kit tier (DESIGN §2): packages under
// internal/ hold mechanics that several packages share (strict JSON and
// the code→status map, an OpenAI-compatible client, top-k, …).
const kit = module + "/internal/"

func isKit(pkg string) bool { return strings.HasPrefix(pkg, kit) }

// mayImport is the layering rule of DESIGN §2 ("one way down"): the root
// package holds the domain and imports the standard library only; every
// other package imports the root, the leaves and the kit, never a
// sibling; a kit package imports only the root, the leaves and other kit
// packages; the store's test harness opens the store, the index's puts an
// index over it; cmd/engram alone wires siblings together (and reads
// configs).
func mayImport(pkg, dep string) bool {
	switch {
	case pkg == module+"/cmd/engram":
		return true
	case slices.Contains(leaves, pkg):
		return false
	case pkg == module:
		return false
	case dep == module || slices.Contains(leaves, dep) || isKit(dep):
		return true
	case pkg == module+"/bench" && dep == module+"/learning":
		// The replay harness (bench/replay.go) runs learning's own
		// feedback code on a recorded trace, so that a policy variant
		// measured in seconds cannot drift from what the server runs.
		return true
	case pkg == module+"/store/storetest":
		return dep == module+"/store"
	case pkg == module+"/index/indextest":
		return dep == module+"/store" || dep == module+"/index"
	}
	return false
}

// why names the rule a forbidden import breaks.
func why(pkg string) string {
	switch {
	case pkg == module:
		return "the root package may import the standard library only"
	case slices.Contains(leaves, pkg):
		return "a leaf package imports nothing of engram's"
	case isKit(pkg):
		return "a kit package (internal/...) imports only the root, the leaves and other kit packages"
	}
	return "only cmd/engram wires sibling packages together (README and docs/code-map.md)"
}

// TestLayers fails when a package imports a sibling it may not, a kit
// package imports anything of engram's but the root, the leaves and the
// kit, or the root package imports anything but the standard library.
// Test files are exempt: a test may wire real parts together.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "sqlite_fts5", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		graph[fields[0]] = fields[1:]
	}
	if len(graph) < 10 {
		t.Fatalf("go list found %d packages:\n%s", len(graph), out)
	}
	if !slices.ContainsFunc(slices.Collect(maps.Keys(graph)), isKit) {
		t.Fatalf("go list found no kit package under %s", kit)
	}
	for _, e := range forbidden(graph) {
		t.Error(e)
	}
}

// forbidden lists the imports of graph (package → its imports) that break
// the layering rule.
func forbidden(graph map[string][]string) []string {
	var out []string
	for _, pkg := range slices.Sorted(maps.Keys(graph)) {
		for _, dep := range graph[pkg] {
			switch {
			case pkg == module && strings.Contains(strings.Split(dep, "/")[0], "."):
				out = append(out, fmt.Sprintf("the root package imports %s: it may import the standard library only", dep))
			case dep != module && !strings.HasPrefix(dep, module+"/"):
			case !mayImport(pkg, dep):
				out = append(out, fmt.Sprintf("%s imports %s: %s", pkg, dep, why(pkg)))
			}
		}
	}
	return out
}

// TestLayersRule: the rule itself, on made-up import graphs, refuses a kit
// package that imports an adapter, the root importing the kit, and a
// sibling import, and allows every package the kit.
func TestLayersRule(t *testing.T) {
	for _, tc := range []struct {
		name string
		pkg  string
		deps []string
		bad  bool
	}{
		{"adapter imports the kit", module + "/server", []string{module, module + "/internal/wire"}, false},
		{"store imports the kit", module + "/store", []string{module + "/internal/topk"}, false},
		{"kit imports the root, a leaf and the kit", module + "/internal/wire", []string{module, module + "/tokens", module + "/internal/topk"}, false},
		{"kit imports a third-party package", module + "/internal/wire", []string{"github.com/gin-gonic/gin"}, false},
		{"kit imports an adapter", module + "/internal/wire", []string{module + "/server"}, true},
		{"bench replays learning's own code", module + "/bench", []string{module + "/learning"}, false},
		{"bench imports another sibling", module + "/bench", []string{module + "/server"}, true},
		{"kit imports the store", module + "/internal/feed", []string{module + "/store"}, true},
		{"root imports the kit", module, []string{module + "/internal/wire"}, true},
		{"leaf imports the kit", module + "/tokens", []string{module + "/internal/wire"}, true},
		{"sibling import", module + "/mcp", []string{module + "/server"}, true},
		{"cmd wires siblings", module + "/cmd/engram", []string{module + "/server", module + "/internal/wire"}, false},
	} {
		got := forbidden(map[string][]string{tc.pkg: tc.deps})
		if (len(got) > 0) != tc.bad {
			t.Errorf("%s: forbidden %q, want refused %v", tc.name, got, tc.bad)
		}
	}
}
