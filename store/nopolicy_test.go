package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreDecidesNothing: the store holds no feedback policy. No source
// of the store names a policy type of the root package, takes or keeps a
// function or interface value that decides for it (a parameter, field or
// variable of a policy type), or reads a policy setting of the feedback
// configuration (the rater cap and window are arguments the workflow in
// learning passes in). The store made every feedback call through an
// engram.FeedbackPolicy before the workflow moved to learning.
func TestStoreDecidesNothing(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]bool{"FeedbackConfig": true, "RaterCap": true, "RaterWindow": true, "ConfidenceStep": true,
		"RewardRate": true, "RevisionThreshold": true, "LearnQueries": true}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "engram" && strings.HasSuffix(n.Sel.Name, "Policy") {
					t.Errorf("%s: the store names engram.%s", fset.Position(n.Pos()), n.Sel.Name)
				}
				if settings[n.Sel.Name] {
					t.Errorf("%s: the store reads the feedback setting %s", fset.Position(n.Pos()), n.Sel.Name)
				}
			case *ast.Ident:
				if strings.Contains(strings.ToLower(n.Name), "policy") {
					t.Errorf("%s: the store holds %s", fset.Position(n.Pos()), n.Name)
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no store source checked")
	}
}
