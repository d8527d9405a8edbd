// Command engram is the agent-memory service: `engram serve` runs the
// HTTP API (with MCP at /mcp), `engram mcp` serves the MCP tools over
// stdio; the other verbs work on the same store from the shell.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/engram-memory/engram"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

const usage = `engram — memory for agents and chat products

usage:
  engram serve [--addr HOST:PORT] [--data DIR] [--config FILE]
  engram mcp [--data DIR] [--config FILE]             MCP tools over stdio, for an MCP client
                     (tenant: that of ENGRAM_API_KEY, else auth.default_tenant)
  engram keys create [--tenant NAME] [--name LABEL] [--clearance LEVEL]   print a new API key (shown once)
  engram keys list [--tenant NAME]
  engram keys revoke KEY_ID
  engram export pairs --format trl|trl-conversational|trl-unpaired|openai [--out FILE] [--tenant NAME]
                     [--since T] [--until T] [--category C] [--min-margin M]
  engram export tenant [--tenant NAME] [--out FILE]   the tenant as JSON Lines (docs/export.md)
  engram import [--tenant NAME] [--ids remap|keep] FILE   load an export into an empty tenant
  engram import markdown [--tenant NAME] [--split file|heading] [--category C] DIR
                     one memory per .md file or per heading; front matter sets fields
  engram backup --out FILE                            consistent copy of the SQLite database while serving
  engram prune [--tenant NAME] --action archive|delete [--older-than D|--before T] [--category C]
                     [--below-retention R] [--dry-run]
  engram reset --tenant NAME --confirm NAME           remove all of a tenant's data (keys stay)
  engram reflect [--tenant NAME] [--category C]       write L3 reflections of the groups that changed
  engram sleep [--tenant NAME]                        merge, archive, expire, compact, re-reflect (every tenant by default)
  engram mirror rebuild [--tenant NAME]               recreate the file mirror from the store (every tenant by default)
  engram mirror sync                                  apply the writes the file mirror has not followed yet
  engram bench locomo --data locomo10.json [--budget N] [--plain]
                     recall quality and latency on LoCoMo (--plain: the BM25 baseline's input)
  engram bench knowledge [--entities 2000] [--seeds 1] [--queries N] [--budget N]
                     knowledge updates on generated people sharing surnames, cities, pets and jobs (4 facts,
                     half after a label, half as sentences, written one at a time from one source; a
                     quarter change one attribute a year later): new value above stale, unchanged city in
                     the top 3 for "Where does X live?", all of a person's current facts in the top facts+2
                     for their name; N recalls per figure (0: everyone), with the knowledge update on and
                     off. Seed 1 tunes, seeds 2-5 are reported
  engram bench latency [--sizes 10000,100000] [--budgets 500,2000] [--queries N] [--http]
  engram bench load [--clients 32] [--duration 1m] [--servers 1,2] [--seed N]
                     creates, recalls and feedback from concurrent clients on servers sharing one database
  engram bench reflect [--data locomo10.json] [--sizes 1000,100000] [--feedback-events N]
                     reflector and sleep cycle: correctness on LoCoMo, time at scale, event log folding
  engram bench router [--data labelled.jsonl]           router accuracy on the built-in sets
  engram version

Every verb takes --data and --config; ENGRAM_* variables override the
config file and flags override both (see configs/engram.yaml).
`

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// Run executes one command line and returns the exit code.
func Run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = runServe(ctx, args[1:], environ, stdout)
	case "mcp":
		err = runMCP(ctx, args[1:], environ, stdout)
	case "keys":
		err = runKeys(ctx, args[1:], environ, stdout)
	case "export":
		err = runExport(ctx, args[1:], environ, stdout)
	case "import":
		err = runImport(ctx, args[1:], environ, stdout)
	case "backup":
		err = runBackup(ctx, args[1:], environ, stdout)
	case "prune":
		err = runPrune(ctx, args[1:], environ, stdout)
	case "reset":
		err = runReset(ctx, args[1:], environ, stdout)
	case "bench":
		err = runBench(ctx, args[1:], environ, stdout)
	case "reflect":
		err = runReflect(ctx, args[1:], environ, stdout)
	case "sleep":
		err = runSleep(ctx, args[1:], environ, stdout)
	case "mirror":
		err = runMirror(ctx, args[1:], environ, stdout)
	case "version":
		fmt.Fprintln(stdout, "engram", Version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "engram: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if engram.ErrorCode(err) != engram.EINTERNAL {
			err = errors.New(engram.ErrorMessage(err))
		}
		fmt.Fprintln(stderr, "engram:", err)
		return 1
	}
	return 0
}
