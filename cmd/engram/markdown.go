package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram"
)

// mdNote is one memory read from Markdown, with where it came from.
type mdNote struct {
	m     *engram.Memory
	where string // file:line
}

// runImportMarkdown is `engram import markdown DIR`: every .md file under
// DIR (sorted) becomes one memory, or one per heading with --split
// heading. A file may open with front matter between "---" lines,
// "field: value" per line, that sets the memory's fields: category,
// subcategory, type, tags ([a, b] or a, b), key, priority, importance,
// confidence, summary, agent_id, security_level, expires_at and
// occurred_at (RFC 3339 or 2006-01-02: when what the note records
// happened, kept apart from created_at, the import time). Every file is
// read and checked before anything is written; an error names file:line.
// Each memory's source is the file (kind file, its path relative to DIR,
// the heading as locator).
func runImportMarkdown(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "import markdown", args: "DIR", summary: "Write every .md file under DIR as one memory, or one per heading with --split heading;\nfront matter (field: value lines between ---) sets the memory's fields. Every file is\nchecked before anything is written; an error names file:line. Creates the tenant when missing."}
	fset := newFlags(v)
	load := commonFlags(fset, false)
	tenant := fset.String("tenant", "", "tenant name, created if needed (default: auth.default_tenant)")
	split := fset.String("split", "file", "file (one memory per file) or heading (one per heading)")
	category := fset.String("category", "", "category of notes whose front matter names none (default: memory.default_category)")
	positional, err := parse(fset, v, args, stdout)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return engram.Errorf(engram.EINVALID, "import markdown: want exactly one DIR (see engram import markdown --help)")
	}
	if *split != "file" && *split != "heading" {
		return engram.Errorf(engram.EINVALID, "import markdown: --split is file or heading, not %q", *split)
	}
	dir := positional[0]
	now := time.Now().UTC()
	var notes []mdNote
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.EqualFold(filepath.Ext(path), ".md") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := readFile(path)
		if err != nil {
			return err
		}
		ns, err := parseMarkdown(filepath.ToSlash(rel), b, *split == "heading", *category, now)
		notes = append(notes, ns...)
		return err
	})
	if err != nil {
		return err
	}
	if len(notes) == 0 {
		return fmt.Errorf("import markdown: no .md file with text under %s", dir)
	}
	db, tctx, err := openTenant(ctx, environ, load, *tenant, true)
	if err != nil {
		return err
	}
	defer db.Close()
	created, dup := 0, 0
	for _, n := range notes {
		res, err := db.CreateMemory(tctx, n.m)
		if err != nil {
			return fmt.Errorf("%s: %w (%d memories written before it)", n.where, err, created)
		}
		if res.Deduplicated {
			dup++
		} else {
			created++
		}
	}
	fmt.Fprintf(stdout, "imported %d memories (%d already there) from %s\n", created, dup, dir)
	return nil
}

// parseMarkdown reads one file's notes.
func parseMarkdown(rel, text string, byHeading bool, category string, now time.Time) ([]mdNote, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	base := &engram.Memory{Category: category}
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		end := -1
		for i := 1; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "---" {
				end = i
				break
			}
		}
		if end < 0 {
			return nil, fmt.Errorf("%s:1: front matter has no closing ---", rel)
		}
		for i := 1; i < end; i++ {
			if err := frontMatter(base, lines[i]); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", rel, i+1, err)
			}
		}
		start = end + 1
	}
	type section struct {
		heading string
		line    int
		body    []string
	}
	secs := []section{{line: start + 1}}
	for i := start; i < len(lines); i++ {
		if byHeading && strings.HasPrefix(lines[i], "#") {
			h := strings.TrimSpace(strings.TrimLeft(lines[i], "#"))
			secs = append(secs, section{heading: h, line: i + 1})
			continue
		}
		secs[len(secs)-1].body = append(secs[len(secs)-1].body, lines[i])
	}
	var out []mdNote
	for _, s := range secs {
		body := strings.TrimSpace(strings.Join(s.body, "\n"))
		if body == "" {
			continue
		}
		m := *base
		m.Tags = append([]string(nil), base.Tags...)
		m.Content = body
		if s.heading != "" {
			m.Content = s.heading + "\n\n" + body
			if m.Key != "" {
				return nil, fmt.Errorf("%s:%d: a key names one memory: use --split file for a file with a key", rel, s.line)
			}
		}
		loc, _ := json.Marshal(map[string]any{"path": rel, "line": s.line, "heading": s.heading})
		src, _ := json.Marshal(engram.Provenance{Kind: "file", Name: rel, RetrievedAt: now.Format(time.RFC3339), Locator: loc})
		m.Source = src
		out = append(out, mdNote{m: &m, where: fmt.Sprintf("%s:%d", rel, s.line)})
	}
	return out, nil
}

// frontMatter sets the field one "name: value" line names.
func frontMatter(m *engram.Memory, line string) error {
	if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
		return nil
	}
	name, value, ok := strings.Cut(line, ":")
	if !ok {
		return fmt.Errorf("want \"field: value\", got %q", line)
	}
	name = strings.TrimSpace(name)
	value = strings.Trim(strings.TrimSpace(value), `"'`)
	num := func() (float64, error) {
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return 0, fmt.Errorf("%s must be a number", name)
		}
		return f, nil
	}
	when := func() (*time.Time, error) {
		for _, layout := range []string{time.RFC3339, "2006-01-02"} {
			if t, err := time.Parse(layout, value); err == nil {
				return &t, nil
			}
		}
		return nil, fmt.Errorf("%s must be an RFC 3339 time or a date (2006-01-02)", name)
	}
	var err error
	switch name {
	case "category":
		m.Category = value
	case "subcategory":
		m.Subcategory = value
	case "type":
		m.Type = value
	case "key":
		m.Key = value
	case "summary":
		m.Summary = value
	case "agent_id":
		m.AgentID = value
	case "security_level":
		m.SecurityLevel = value
	case "priority":
		m.Priority = engram.Priority(strings.ToUpper(value))
	case "importance":
		m.Importance, err = num()
	case "confidence":
		m.Confidence, err = num()
	case "occurred_at":
		m.OccurredAt, err = when()
	case "expires_at":
		m.ExpiresAt, err = when()
	case "tags":
		for _, t := range strings.Split(strings.Trim(value, "[]"), ",") {
			if t = strings.Trim(strings.TrimSpace(t), `"'`); t != "" {
				m.Tags = append(m.Tags, t)
			}
		}
	default:
		return fmt.Errorf("unknown field %q (category, subcategory, type, tags, key, priority, importance, confidence, summary, agent_id, security_level, occurred_at, expires_at)", name)
	}
	return err
}

// readFile reads a Markdown file as text.
func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
