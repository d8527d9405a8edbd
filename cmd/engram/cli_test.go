package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// run calls Run in the test's working directory and returns the exit
// status, stdout and stderr.
func run(t *testing.T, environ []string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, environ, &out, &errb)
	return code, out.String(), errb.String()
}

// TestHelpEveryVerb: every verb and sub-verb answers --help (and -h)
// with exit 0, its usage and its flags on stdout, nothing on stderr,
// and touches nothing: the working directory stays empty.
func TestHelpEveryVerb(t *testing.T) {
	t.Chdir(t.TempDir())
	type want struct {
		args  []string
		flags []string
	}
	cases := []want{
		{[]string{"serve"}, []string{"-addr", "-data", "-config"}},
		{[]string{"mcp"}, []string{"-data", "-config"}},
		{[]string{"reflect"}, []string{"-tenant", "-category", "-data"}},
		{[]string{"sleep"}, []string{"-tenant", "-data"}},
		{[]string{"jobs"}, []string{"-tenant", "-status", "-data"}},
		{[]string{"keys", "create"}, []string{"-tenant", "-name", "-clearance", "-data"}},
		{[]string{"keys", "list"}, []string{"-tenant", "-data"}},
		{[]string{"keys", "revoke"}, []string{"-data"}},
		{[]string{"export", "pairs"}, []string{"-format", "-out", "-since", "-until", "-category", "-user", "-min-margin", "-tenant"}},
		{[]string{"export", "tenant"}, []string{"-tenant", "-out", "-data"}},
		{[]string{"import"}, []string{"-tenant", "-ids", "-data"}},
		{[]string{"import", "markdown"}, []string{"-tenant", "-split", "-category", "-data"}},
		{[]string{"backup"}, []string{"-out", "-data"}},
		{[]string{"prune"}, []string{"-tenant", "-action", "-older-than", "-before", "-category", "-below-retention", "-user", "-dry-run", "-data"}},
		{[]string{"reset"}, []string{"-tenant", "-confirm", "-data"}},
		{[]string{"mirror", "rebuild"}, []string{"-tenant", "-data"}},
		{[]string{"mirror", "sync"}, []string{"-data"}},
		{[]string{"bench", "locomo"}, []string{"-data", "-budget", "-plain", "-sessions", "-feedback", "-keep"}},
		{[]string{"bench", "learning"}, []string{"-seeds", "-mix", "-rounds"}},
		{[]string{"bench", "replay"}, []string{"-trace", "-config", "-feature-min", "-kind-half", "-origin-power", "-trust-share"}},
		{[]string{"bench", "knowledge"}, []string{"-entities", "-seeds", "-queries"}},
		{[]string{"bench", "latency"}, []string{"-sizes", "-budgets", "-queries"}},
		{[]string{"bench", "load"}, []string{"-clients", "-duration", "-servers", "-seed"}},
		{[]string{"bench", "reflect"}, []string{"-sizes", "-feedback-events"}},
		{[]string{"bench", "users"}, []string{"-users", "-per-user", "-tenants", "-per-tenant", "-sample", "-warm-rounds", "-budget"}},
		{[]string{"bench", "router"}, []string{"-data"}},
		{[]string{"bench", "gate"}, []string{"-data"}},
	}
	seen := map[string]bool{}
	for _, g := range []group{keysVerbs, exportVerbs, mirrorVerbs, benchVerbs} {
		for _, v := range g.subs {
			seen[v.name] = false
		}
	}
	for _, c := range cases {
		name := strings.Join(c.args, " ")
		seen[name] = true
		for _, h := range []string{"--help", "-h"} {
			code, out, errs := run(t, nil, append(c.args, h)...)
			if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: engram "+name) {
				t.Errorf("engram %s %s: exit %d, stderr %q, stdout %q", name, h, code, errs, out)
				continue
			}
			for _, f := range c.flags {
				if !strings.Contains(out, "  "+f+" ") && !strings.Contains(out, "  "+f+"\n") {
					t.Errorf("engram %s --help does not list %s:\n%s", name, f, out)
				}
			}
		}
	}
	for name, ok := range seen {
		if !ok {
			t.Errorf("sub-verb %q has no --help case here", name)
		}
	}
	// The groups list their sub-verbs; help VERB is VERB --help.
	for _, g := range []group{keysVerbs, exportVerbs, mirrorVerbs, benchVerbs} {
		for _, args := range [][]string{{g.name, "--help"}, {g.name, "-h"}, {"help", g.name}} {
			code, out, errs := run(t, nil, args...)
			if code != 0 || errs != "" {
				t.Errorf("engram %v: exit %d, stderr %q", args, code, errs)
			}
			for _, v := range g.subs {
				if !strings.Contains(out, v.name) {
					t.Errorf("engram %v does not list %s:\n%s", args, v.name, out)
				}
			}
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}, {"help", "serve"}} {
		if code, out, _ := run(t, nil, args...); code != 0 || !strings.Contains(out, "usage: engram") {
			t.Errorf("engram %v: exit %d", args, code)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) > 0 {
		t.Errorf("--help left %v in the working directory", entries)
	}
}

// TestFlagsAfterArguments: flags are read after positional arguments
// (keys revoke KEY --data DIR), and nothing lands in the working
// directory's ./data.
func TestFlagsAfterArguments(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	data := filepath.Join(t.TempDir(), "data")
	code, out, errs := run(t, nil, "keys", "create", "--data", data, "--tenant", "acme", "--name", "ci")
	if code != 0 || !strings.HasPrefix(out, "egk_") {
		t.Fatalf("keys create: %d %q %q", code, out, errs)
	}
	_, list, _ := run(t, nil, "keys", "list", "--tenant", "acme", "--data", data)
	id := regexp.MustCompile(`key_[a-z0-9]+`).FindString(list)
	if id == "" {
		t.Fatalf("keys list: %q", list)
	}
	if code, out, errs := run(t, nil, "keys", "revoke", id, "--data", data); code != 0 || out != "revoked "+id+"\n" {
		t.Fatalf("keys revoke KEY --data DIR: %d %q %q", code, out, errs)
	}
	_, list, _ = run(t, nil, "keys", "list", "--data", data)
	for _, line := range strings.Split(list, "\n") {
		if fields := strings.Fields(line); strings.Contains(line, id) && fields[len(fields)-1] == "-" {
			t.Errorf("after keys revoke the key is not revoked:\n%s", list)
		}
	}
	if code, _, errs := run(t, nil, "keys", "revoke", id, "extra", "--data", data); code != 1 || !strings.Contains(errs, "exactly one KEY_ID") {
		t.Errorf("two key ids: %d %q", code, errs)
	}
	if code, _, errs := run(t, nil, "keys", "list", "stray", "--data", data); code != 1 || !strings.Contains(errs, `unexpected argument "stray"`) {
		t.Errorf("keys list with an argument: %d %q", code, errs)
	}
	if code, _, errs := run(t, nil, "keys", "list", "--data"); code != 1 || !strings.Contains(errs, "flag needs an argument") {
		t.Errorf("a flag without its value: %d %q", code, errs)
	}
	if code, _, errs := run(t, nil, "keys", "rotate"); code != 1 || !strings.Contains(errs, `unknown verb "rotate"`) || !strings.Contains(errs, "keys revoke") {
		t.Errorf("unknown sub-verb: %d %q", code, errs)
	}
	if entries, _ := os.ReadDir(cwd); len(entries) > 0 {
		t.Errorf("the working directory got %v", entries)
	}
}

// TestNoStrayDatabase: a verb that reads or changes what is in the store
// refuses to run where there is no database, and creates none.
func TestNoStrayDatabase(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, args := range [][]string{
		{"keys", "list"},
		{"keys", "revoke", "key_abc"},
		{"export", "pairs", "--format", "trl"},
		{"export", "tenant"},
		{"backup", "--out", "copy.db"},
		{"prune", "--category", "work"},
		{"reset", "--tenant", "acme", "--confirm", "acme"},
		{"reflect"},
		{"sleep"},
		{"mirror", "rebuild"},
		{"mirror", "sync"},
		{"keys", "list", "--data", filepath.Join(cwd, "elsewhere")},
	} {
		code, _, errs := run(t, nil, args...)
		if code != 1 || !strings.Contains(errs, "no database at") || !strings.Contains(errs, "--data") {
			t.Errorf("engram %v: exit %d, stderr %q", args, code, errs)
		}
	}
	if entries, _ := os.ReadDir(cwd); len(entries) > 0 {
		t.Errorf("the working directory got %v", entries)
	}
}

// TestBenchListsWhatItRuns: engram bench alone lists the benchmarks; a
// flag another benchmark reads is refused, not ignored (latency has no
// --http: it always measures over HTTP too).
func TestBenchListsWhatItRuns(t *testing.T) {
	code, out, _ := run(t, nil, "bench")
	if code != 0 {
		t.Fatalf("bench: exit %d", code)
	}
	for _, name := range []string{"locomo", "learning", "replay", "knowledge", "latency", "load", "reflect", "router", "users"} {
		if !strings.Contains(out, "bench "+name) {
			t.Errorf("engram bench does not list %s:\n%s", name, out)
		}
	}
	for _, args := range [][]string{{"bench", "latency", "--http"}, {"bench", "router", "--budget", "10"}, {"bench", "nosuch"},
		{"bench", "users", "--users", "0"}, {"bench", "users", "--sizes", "10"},
		{"bench", "replay", "--budget", "10"}, {"bench", "replay", "--keep", "dir"}, {"bench", "replay"},
		{"bench", "replay", "--config", filepath.Join(t.TempDir(), "missing.yaml"), "--trace", "trace.jsonl"}} {
		if code, _, errs := run(t, nil, args...); code != 1 || errs == "" {
			t.Errorf("engram %v: exit %d %q", args, code, errs)
		}
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, nil, "version")
	if code != 0 || !strings.HasPrefix(out, "engram ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, _ := run(t, nil, "version", "--help"); code != 0 {
		t.Errorf("version --help: exit %d", code)
	}
}
