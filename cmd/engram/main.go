// Command engram is the agent-memory service: `engram serve` runs the
// HTTP API (with MCP at /mcp), `engram mcp` serves the MCP tools over
// stdio; the other verbs work on the same store from the shell.
package main

import (
	"context"
	"errors"
	"flag"
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

usage: engram VERB [flags]      (engram VERB --help lists a verb's flags)

  serve                         the HTTP API (/v1, /openapi.json), /mcp and /console/
  mcp                           the MCP tools over stdio, for an MCP client
  keys create|list|revoke       API keys of tenants
  export pairs|tenant           preference data (TRL, OpenAI) or a whole tenant as JSON Lines
  import FILE|markdown DIR      an export into an empty tenant, or Markdown notes as memories
  backup                        a consistent copy of the SQLite database, also while serving
  prune                         archive or delete a tenant's memories by age, category, retention
  reset                         remove all of a tenant's data (its keys stay)
  reflect                       write L3 reflections of the groups that changed
  sleep                         merge, archive, expire, compact, re-reflect
  jobs [ID]                     a tenant's jobs (long work off the request path), or one
  mirror rebuild|sync           the file mirror for shell agents
  bench                         benchmarks (engram bench lists them)
  version                       module version, VCS revision and time of this build
  help [VERB]                   this text, or VERB --help

Flags may come before or after positional arguments. Every verb takes
--data and --config; ENGRAM_* variables override the config file and
flags override both (see configs/engram.yaml). Verbs that read the store
never create a database: they need --data where engram serve keeps it.
`

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
	case "jobs":
		err = runJobs(ctx, args[1:], environ, stdout)
	case "mirror":
		err = runMirror(ctx, args[1:], environ, stdout)
	case "version":
		if len(args) > 1 && args[1] != "-h" && args[1] != "--help" && args[1] != "-help" {
			err = engram.Errorf(engram.EINVALID, "version: unexpected argument %q", args[1])
			break
		}
		fmt.Fprintln(stdout, buildVersion())
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			return Run(ctx, []string{args[1], "--help"}, environ, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "engram: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
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
