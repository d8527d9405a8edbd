package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/store"
)

// openTenant opens the store and returns a context acting for tenant
// (auth.default_tenant when empty). With create set the tenant, and the
// database, are created when missing (imports); without, both must exist.
func openTenant(ctx context.Context, environ []string, load func([]string) (configs.Config, error), tenant string, create bool) (*store.DB, context.Context, error) {
	cfg, err := load(environ)
	if err != nil {
		return nil, nil, err
	}
	return openConfigTenant(ctx, cfg, tenant, create)
}

// openConfigTenant is openTenant for a verb that has read its config.
func openConfigTenant(ctx context.Context, cfg configs.Config, tenant string, create bool) (*store.DB, context.Context, error) {
	if tenant == "" {
		tenant = cfg.Auth.DefaultTenant
	}
	open := openExisting
	if create {
		open = Open
	}
	db, err := open(ctx, cfg, NewLogger(cfg, os.Stderr))
	if err != nil {
		return nil, nil, err
	}
	var t *engram.Tenant
	if create {
		t, err = db.EnsureTenant(ctx, tenant)
	} else {
		t, err = db.FindTenant(ctx, tenant)
	}
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, engram.NewContextWithTenant(ctx, t.ID), nil
}

// runExportTenant is `engram export tenant`: the same JSON Lines as
// GET /v1/export, offline.
func runExportTenant(ctx context.Context, v verb, args, environ []string, stdout io.Writer) error {
	fs := newFlags(v)
	load := commonFlags(fs, false)
	tenant := fs.String("tenant", "", "tenant name (default: auth.default_tenant)")
	out := fs.String("out", "-", "output file, must not exist (- for standard output)")
	positional, err := parse(fs, v, args, stdout)
	if err != nil {
		return err
	}
	if err := noArgs(v, positional); err != nil {
		return err
	}
	db, tctx, err := openTenant(ctx, environ, load, *tenant, false)
	if err != nil {
		return err
	}
	defer db.Close()
	w := stdout
	if *out != "-" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return db.ExportTenant(tctx, w)
}

// importVerb is `engram import FILE`; `engram import markdown DIR` is
// runImportMarkdown's. A file named markdown is imported as ./markdown.
var importVerb = verb{name: "import", args: "FILE", summary: "Load an export (engram export tenant, GET /v1/export; - reads standard input) into an\nempty tenant, in one transaction; the tenant and the database are created when missing.\nengram import markdown DIR loads Markdown notes (see engram import markdown --help)."}

// runImport is `engram import FILE` (an export, into an empty tenant) and
// `engram import markdown DIR`.
func runImport(ctx context.Context, args, environ []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "markdown" {
		return runImportMarkdown(ctx, args[1:], environ, stdout)
	}
	v := importVerb
	fs := newFlags(v)
	load := commonFlags(fs, false)
	tenant := fs.String("tenant", "", "tenant name, created if needed (default: auth.default_tenant)")
	ids := fs.String("ids", engram.ImportRemap, "remap (new ids) or keep (the export's ids)")
	positional, err := parse(fs, v, args, stdout)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return engram.Errorf(engram.EINVALID, "import: want exactly one FILE, - for standard input (see engram import --help)")
	}
	// Checked before the tenant and the database are created.
	if *ids != engram.ImportRemap && *ids != engram.ImportKeep {
		return engram.Errorf(engram.EINVALID, "import: --ids is %s or %s, not %q", engram.ImportRemap, engram.ImportKeep, *ids)
	}
	in := io.Reader(os.Stdin)
	if positional[0] != "-" {
		f, err := os.Open(positional[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	db, tctx, err := openTenant(ctx, environ, load, *tenant, true)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.ImportTenant(tctx, bufio.NewReaderSize(in, 64<<10), *ids)
	if err != nil {
		return err
	}
	total := 0
	for _, n := range res.Records {
		total += n
	}
	fmt.Fprintf(stdout, "imported %d records into tenant %q (%d memories, ids %s)\n", total, res.Tenant, res.Records["memory"], res.IDs)
	return nil
}

// runBackup is `engram backup --out FILE`.
func runBackup(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "backup", summary: "Write a consistent copy of the SQLite database (every tenant) to --out, also while\nengram serve runs; the copy opens as it is. PostgreSQL: use pg_dump (docs/export.md)."}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	out := fs.String("out", "", "the copy to write (required; must not exist)")
	positional, err := parse(fs, v, args, stdout)
	if err != nil {
		return err
	}
	if err := noArgs(v, positional); err != nil {
		return err
	}
	if *out == "" {
		return engram.Errorf(engram.EINVALID, "backup: want --out FILE (see engram backup --help)")
	}
	cfg, err := load(environ)
	if err != nil {
		return err
	}
	db, err := openExisting(ctx, cfg, NewLogger(cfg, os.Stderr))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", *out)
	return nil
}

// runPrune is `engram prune`.
func runPrune(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "prune", summary: "Archive or delete a tenant's memories older than --older-than or --before, of --category,\nor below --below-retention (at least one), and only --user's if given; --dry-run counts and\nchanges nothing."}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	tenant := fs.String("tenant", "", "tenant name (default: auth.default_tenant)")
	action := fs.String("action", engram.PruneArchive, "archive or delete")
	olderThan := fs.Duration("older-than", 0, "memories created longer ago than this (e.g. 2160h)")
	before := fs.String("before", "", "memories created before this RFC 3339 time")
	category := fs.String("category", "", "memories of this category")
	below := fs.Float64("below-retention", 0, "memories whose retention is below this, in (0, 1]")
	user := optionalString(fs, "user", "only this end user's memories (\"\": the shared ones; default: every user's)")
	dry := fs.Bool("dry-run", false, "count, change nothing")
	positional, err := parse(fs, v, args, stdout)
	if err != nil {
		return err
	}
	if err := noArgs(v, positional); err != nil {
		return err
	}
	f := engram.PruneFilter{Action: *action, DryRun: *dry}
	switch {
	case *before != "" && *olderThan != 0:
		return engram.Errorf(engram.EINVALID, "prune: give --before or --older-than, not both")
	case *before != "":
		t, err := time.Parse(time.RFC3339, *before)
		if err != nil {
			return engram.Errorf(engram.EINVALID, "prune: --before %q is not an RFC 3339 time", *before)
		}
		f.Before = &t
	case *olderThan != 0:
		t := time.Now().Add(-*olderThan)
		f.Before = &t
	}
	if *category != "" {
		f.Category = category
	}
	if *below != 0 {
		f.BelowRetention = below
	}
	f.UserID = user.value()
	if err := f.Validate(); err != nil {
		return err
	}
	db, tctx, err := openTenant(ctx, environ, load, *tenant, false)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.PruneMemories(tctx, f)
	if err != nil {
		return err
	}
	verb := map[string]string{engram.PruneArchive: "archived", engram.PruneDelete: "deleted"}[f.Action]
	if res.DryRun {
		verb = "would be " + verb
	}
	fmt.Fprintf(stdout, "%d memories %s\n", res.Matched, verb)
	return nil
}

// runReset is `engram reset --tenant NAME --confirm NAME`.
func runReset(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "reset", summary: "Remove all of a tenant's data — memories, events, sessions, interactions, feedback,\npairs, reflections — for good; its keys stay. Needs --tenant NAME --confirm NAME."}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	tenant := fs.String("tenant", "", "the tenant to empty (required)")
	confirm := fs.String("confirm", "", "the tenant's name again: nothing is undone")
	positional, err := parse(fs, v, args, stdout)
	if err != nil {
		return err
	}
	if err := noArgs(v, positional); err != nil {
		return err
	}
	if *tenant == "" || *confirm != *tenant {
		return engram.Errorf(engram.EINVALID, "reset: want --tenant NAME --confirm NAME: it removes all of the tenant's data (its keys stay)")
	}
	db, tctx, err := openTenant(ctx, environ, load, *tenant, false)
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.ResetTenant(tctx)
	if err != nil {
		return err
	}
	var parts []string
	for _, t := range []string{"memories", "memory_events", "sessions", "interactions", "feedback", "pairs", "reflections"} {
		parts = append(parts, fmt.Sprintf("%s %d", t, res.Removed[t]))
	}
	fmt.Fprintf(stdout, "reset tenant %q: removed %s\n", res.Tenant, strings.Join(parts, ", "))
	return nil
}
