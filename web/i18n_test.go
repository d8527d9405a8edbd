package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestMessages keeps every message key the templates and handlers use in
// both languages.
func TestMessages(t *testing.T) {
	used := regexp.MustCompile(`\.Tf? "([a-z0-9.]+)"`)
	seen := 0
	err := fs.WalkDir(templateFS, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := templateFS.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range used.FindAllStringSubmatch(string(b), -1) {
			seen++
			if _, ok := messages[m[1]]; !ok {
				t.Errorf("%s uses %q, which has no message", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 50 {
		t.Fatalf("found only %d message uses", seen)
	}
	for _, kind := range []string{"promoted", "demoted"} {
		for _, k := range []string{"learning." + kind, "empty." + kind} {
			if _, ok := messages[k]; !ok {
				t.Errorf("no message %q", k)
			}
		}
	}
	for _, nav := range []string{"signin", "error", "overview", "memories", "reflections", "feedback", "pairs", "learning", "playground"} {
		if _, ok := messages["nav."+nav]; !ok {
			t.Errorf("no title for page %s", nav)
		}
	}
	for k, m := range messages {
		if strings.TrimSpace(m[0]) == "" || strings.TrimSpace(m[1]) == "" {
			t.Errorf("message %q is missing a language", k)
		}
	}
}
