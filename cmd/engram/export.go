package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/learning"
)

// exportVerbs are the sub-verbs of engram export.
var exportVerbs = group{name: "export", subs: []verb{
	{name: "export pairs", summary: "Write a tenant's preference data as JSON Lines, offline, straight from the store:\nthe lines GET /v1/pairs streams (trl, trl-conversational, trl-unpaired, openai)."},
	{name: "export tenant", summary: "Write all of a tenant's data as versioned JSON Lines, offline: the lines GET /v1/export\nstreams and engram import reads (docs/export.md)."},
}}

// runExport is `engram export pairs`, a tenant's preference data as JSON
// Lines, offline, straight from the store: the same lines GET /v1/pairs
// streams; and `engram export tenant` (runExportTenant).
func runExport(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v, err := exportVerbs.dispatch(args, stdout)
	if err != nil {
		return err
	}
	if v.name == "export tenant" {
		return runExportTenant(ctx, v, args[1:], environ, stdout)
	}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	format := fs.String("format", "", "trl, trl-conversational, trl-unpaired or openai")
	out := fs.String("out", "-", "output file (- for standard output)")
	tenant := fs.String("tenant", "", "tenant name (default: auth.default_tenant)")
	since := fs.String("since", "", "only data created at or after this RFC 3339 time")
	until := fs.String("until", "", "only data created before this RFC 3339 time")
	category := fs.String("category", "", "only this category")
	user := optionalString(fs, "user", "only this end user's data (\"\": the shared data; default: every user's)")
	minMargin := fs.Float64("min-margin", 0, "only pairs with at least this margin (0-2)")
	positional, err := parse(fs, v, args[1:], stdout)
	if err != nil {
		return err
	}
	if err := noArgs(v, positional); err != nil {
		return err
	}
	f, err := learning.ParseFormat(*format)
	if err != nil {
		return err
	}
	var filter engram.PairFilter
	filter.MinMargin = *minMargin
	if *category != "" {
		filter.Category = category
	}
	if filter.UserID = user.value(); filter.UserID != nil {
		if err := engram.CheckUserID(*filter.UserID); err != nil {
			return err
		}
	}
	for flagValue, dst := range map[string]**time.Time{*since: &filter.Since, *until: &filter.Until} {
		if flagValue == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, flagValue)
		if err != nil {
			return fmt.Errorf("export: %q is not an RFC 3339 time", flagValue)
		}
		*dst = &t
	}
	cfg, err := load(environ)
	if err != nil {
		return err
	}
	if *tenant == "" {
		*tenant = cfg.Auth.DefaultTenant
	}
	db, ctx, err := openConfigTenant(ctx, cfg, *tenant, false)
	if err != nil {
		return err
	}
	defer db.Close()
	w := stdout
	if *out != "-" {
		file, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer file.Close()
		w = file
	}
	buf := bufio.NewWriterSize(w, 256<<10)
	n, err := learning.Export(ctx, db, buf, f, filter)
	if err == nil {
		err = buf.Flush()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "exported %d lines (%s) for tenant %q\n", n, f, *tenant)
	return nil
}
