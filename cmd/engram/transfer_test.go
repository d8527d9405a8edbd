package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
)

// runCLI runs one command line and returns its exit code and output.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, nil, &out, &errb)
	return code, out.String(), errb.String()
}

// memoriesOf lists a tenant's live memories in the store under data.
func memoriesOf(t *testing.T, data, tenant string) []*engram.Memory {
	t.Helper()
	cfg := configs.Default()
	cfg.DataDir = data
	db, err := Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tn, err := db.FindTenant(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.FindMemories(engram.NewContextWithTenant(context.Background(), tn.ID), engram.MemoryFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// TestTransferCLI: import markdown (front matter, headings, occurred_at
// apart from the import time, a bad file refused with file:line and
// nothing written), export tenant, import into another tenant, backup,
// prune and reset with their confirmation.
func TestTransferCLI(t *testing.T) {
	data, notes := t.TempDir(), t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(notes, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(notes, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("coffee.md", "---\ncategory: preference\ntags: [coffee, morning]\noccurred_at: 2024-03-01\n---\nMaya takes her coffee with oat milk.\n")
	write("work/standup.md", "# Standup\nEvery weekday at nine.\n\n# Deploys\nOn Tuesdays, after the standup.\n")
	write("bad/broken.md", "---\ncolour: red\n---\ntext\n")

	code, _, stderr := runCLI("import", "markdown", "--data", data, "--tenant", "notes", notes)
	if code != 1 || !strings.Contains(stderr, "bad/broken.md:2") {
		t.Fatalf("a bad front matter: exit %d %s", code, stderr)
	}
	if err := os.Remove(filepath.Join(notes, "bad/broken.md")); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := runCLI("import", "markdown", "--data", data, "--tenant", "notes", "--split", "heading", "--category", "work", notes); code != 0 {
		t.Fatalf("import markdown: %d %s %s", code, out, stderr)
	}
	ms := memoriesOf(t, data, "notes")
	if len(ms) != 3 {
		t.Fatalf("want 3 memories (1 file + 2 headings), got %d", len(ms))
	}
	for _, m := range ms {
		if strings.Contains(m.Content, "oat milk") {
			if m.Category != "preference" || m.OccurredAt == nil || m.OccurredAt.Year() != 2024 || time.Since(m.CreatedAt) > time.Hour || len(m.Tags) != 2 {
				t.Fatalf("front matter not applied: %+v", m)
			}
		} else if m.Category != "work" || !strings.HasPrefix(m.Content, "Standup") && !strings.HasPrefix(m.Content, "Deploys") {
			t.Fatalf("heading note: %+v", m)
		}
	}

	export := filepath.Join(t.TempDir(), "notes.jsonl")
	if code, _, stderr := runCLI("export", "tenant", "--data", data, "--tenant", "notes", "--out", export); code != 0 {
		t.Fatalf("export tenant: %s", stderr)
	}
	if code, _, stderr := runCLI("import", "--data", data, "--tenant", "copy", "--ids", "sideways", export); code != 1 || !strings.Contains(stderr, "--ids") {
		t.Fatalf("import --ids sideways: %d %s", code, stderr)
	}
	if code, out, stderr := runCLI("import", "--data", data, "--tenant", "copy", export); code != 0 || !strings.Contains(out, "3 memories") {
		t.Fatalf("import: %d %s %s", code, out, stderr)
	}
	if code, _, stderr := runCLI("import", export, "--data", data, "--tenant", "copy"); code != 1 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("import into a full tenant: %d %s", code, stderr)
	}
	if got := memoriesOf(t, data, "copy"); len(got) != 3 {
		t.Fatalf("copy holds %d memories", len(got))
	}

	if code, _, stderr := runCLI("keys", "create", "--data", data, "--tenant", "copy", "--clearance", "top"); code != 1 || !strings.Contains(stderr, "clearance") {
		t.Fatalf("keys create with a bad clearance: %d %s", code, stderr)
	}
	if code, _, stderr := runCLI("keys", "create", "--data", data, "--tenant", "copy", "--clearance", "secret"); code != 0 {
		t.Fatalf("keys create --clearance: %s", stderr)
	}
	if _, out, _ := runCLI("keys", "list", "--data", data, "--tenant", "copy"); !strings.Contains(out, "secret") {
		t.Fatalf("keys list shows no clearance: %s", out)
	}

	backup := filepath.Join(t.TempDir(), "engram.db")
	if code, _, stderr := runCLI("backup", "--data", data, "--out", backup); code != 0 {
		t.Fatalf("backup: %s", stderr)
	}
	if code, _, _ := runCLI("backup", "--data", data, "--out", backup); code != 1 {
		t.Fatal("a backup must not overwrite")
	}
	if got := memoriesOf(t, filepath.Dir(backup), "copy"); len(got) != 3 {
		t.Fatalf("the backup holds %d memories of copy", len(got))
	}

	if code, _, stderr := runCLI("prune", "--data", data, "--tenant", "copy", "--category", "work", "--user", "a b"); code != 1 || !strings.Contains(stderr, "user_id") {
		t.Fatalf("prune --user with a bad id: %d %s", code, stderr)
	}
	if code, out, _ := runCLI("prune", "--data", data, "--tenant", "copy", "--category", "work", "--user", "ann", "--dry-run"); code != 0 || !strings.Contains(out, "0 memories would be archived") {
		t.Fatalf("prune --user ann (the imported notes are shared): %s", out)
	}
	if code, out, _ := runCLI("prune", "--data", data, "--tenant", "copy", "--category", "work", "--user", "", "--dry-run"); code != 0 || !strings.Contains(out, "2 memories would be archived") {
		t.Fatalf("prune --user \"\": %s", out)
	}
	if code, out, _ := runCLI("prune", "--data", data, "--tenant", "copy", "--category", "work", "--dry-run"); code != 0 || !strings.Contains(out, "2 memories would be archived") {
		t.Fatalf("prune dry run: %s", out)
	}
	if code, _, stderr := runCLI("prune", "--data", data, "--tenant", "copy"); code != 1 || !strings.Contains(stderr, "at least one") {
		t.Fatalf("prune without a filter: %s", stderr)
	}
	if code, out, _ := runCLI("prune", "--data", data, "--tenant", "copy", "--category", "work", "--action", "delete"); code != 0 || !strings.Contains(out, "2 memories deleted") {
		t.Fatalf("prune: %s", out)
	}
	if code, _, stderr := runCLI("reset", "--data", data, "--tenant", "copy"); code != 1 || !strings.Contains(stderr, "--confirm") {
		t.Fatalf("reset without confirmation: %s", stderr)
	}
	if code, out, stderr := runCLI("reset", "--data", data, "--tenant", "copy", "--confirm", "copy"); code != 0 || !strings.Contains(out, "memories 3") {
		t.Fatalf("reset: %s %s", out, stderr)
	}
	if got := memoriesOf(t, data, "copy"); len(got) != 0 {
		t.Fatalf("after reset copy holds %d memories", len(got))
	}
	if got := memoriesOf(t, data, "notes"); len(got) != 3 {
		t.Fatalf("a reset of copy touched notes: %d memories", len(got))
	}
}
