package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/engram-memory/engram"
)

func runKeys(ctx context.Context, args, environ []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("keys: want create, list or revoke")
	}
	verb := args[0]
	fs := flag.NewFlagSet("keys "+verb, flag.ContinueOnError)
	load := commonFlags(fs, false)
	tenant := fs.String("tenant", "", "tenant name (default: auth.default_tenant)")
	name := fs.String("name", "cli", "label for the new key")
	clearance := fs.String("clearance", "", "highest security_level the new key reads (default: internal)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := load(environ)
	if err != nil {
		return err
	}
	db, err := Open(ctx, cfg, NewLogger(cfg, os.Stderr))
	if err != nil {
		return err
	}
	defer db.Close()
	if *tenant == "" && verb == "create" {
		*tenant = cfg.Auth.DefaultTenant
	}
	switch verb {
	case "create":
		if _, err := db.EnsureTenant(ctx, *tenant); err != nil {
			return err
		}
		if *clearance != "" && !engram.ValidSecurityLevel(*clearance) {
			return errors.New("keys create: --clearance must be public, internal, confidential or secret")
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
	case "list":
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
	case "revoke":
		if fs.NArg() != 1 {
			return errors.New("keys revoke: want exactly one KEY_ID (see engram keys list)")
		}
		if err := db.RevokeAPIKey(ctx, fs.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", fs.Arg(0))
	default:
		return fmt.Errorf("keys: unknown verb %q; want create, list or revoke", verb)
	}
	return nil
}
