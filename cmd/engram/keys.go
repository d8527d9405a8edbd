package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/engram-memory/engram"
)

// keysVerbs are the sub-verbs of engram keys.
var keysVerbs = group{name: "keys", subs: []verb{
	{name: "keys create", summary: "Print a new API key of a tenant (shown once; stored hashed). Creates the tenant,\nand the database when there is none yet. --clearance caps the security_level it reads."},
	{name: "keys list", summary: "List API keys: id, tenant, name, prefix, clearance, created, revoked."},
	{name: "keys revoke", args: "KEY_ID", summary: "Revoke a key by its id (see engram keys list); it answers 401 from then on."},
}}

func runKeys(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v, err := keysVerbs.dispatch(args, stdout)
	if err != nil {
		return err
	}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	var tenant, name, clearance *string
	switch v.name {
	case "keys create":
		tenant = fs.String("tenant", "", "tenant name (default: auth.default_tenant)")
		name = fs.String("name", "cli", "label for the new key")
		clearance = fs.String("clearance", "", "highest security_level the new key reads: public, internal, confidential or secret (default: internal)")
	case "keys list":
		tenant = fs.String("tenant", "", "only this tenant's keys (default: every tenant's)")
	}
	positional, err := parse(fs, v, args[1:], stdout)
	if err != nil {
		return err
	}
	if v.name == "keys revoke" {
		if len(positional) != 1 {
			return engram.Errorf(engram.EINVALID, "keys revoke: want exactly one KEY_ID (see engram keys list)")
		}
	} else if err := noArgs(v, positional); err != nil {
		return err
	}
	if clearance != nil && *clearance != "" && !engram.ValidSecurityLevel(*clearance) {
		return engram.Errorf(engram.EINVALID, "keys create: --clearance must be public, internal, confidential or secret")
	}
	cfg, err := load(environ)
	if err != nil {
		return err
	}
	open := openExisting
	if v.name == "keys create" {
		open = Open
	}
	db, err := open(ctx, cfg, NewLogger(cfg, os.Stderr))
	if err != nil {
		return err
	}
	defer db.Close()
	switch v.name {
	case "keys create":
		if *tenant == "" {
			*tenant = cfg.Auth.DefaultTenant
		}
		if _, err := db.EnsureTenant(ctx, *tenant); err != nil {
			return err
		}
		key, secret, err := db.CreateAPIKey(ctx, *tenant, *name)
		if err != nil {
			return err
		}
		if *clearance != "" {
			if key, err = db.UpdateAPIKey(ctx, key.ID, engram.KeyUpdate{Clearance: clearance}); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "%s\n", secret)
		fmt.Fprintf(os.Stderr, "created key %s for tenant %q; the secret above is shown only once\n", key.ID, *tenant)
	case "keys list":
		keys, err := db.FindAPIKeys(ctx, *tenant)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTENANT\tNAME\tPREFIX\tCLEARANCE\tCREATED\tREVOKED")
		for _, k := range keys {
			revoked := "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s…\t%s\t%s\t%s\n", k.ID, k.TenantName, k.Name, k.Prefix, k.Clearance, k.CreatedAt.Format(time.RFC3339), revoked)
		}
		return tw.Flush()
	case "keys revoke":
		if err := db.RevokeAPIKey(ctx, positional[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", positional[0])
	}
	return nil
}
