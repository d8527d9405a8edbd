package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/configs"
	"github.com/engram-memory/engram/store"
)

// verb describes one verb or sub-verb of the command line for its
// --help: how it is called and what it does; the flags come from its
// flag set.
type verb struct {
	name    string // "keys revoke"
	args    string // positional arguments, e.g. "KEY_ID"
	summary string
}

// newFlags returns the flag set of v. Its own output is discarded: a bad
// flag comes back from parse as an error (Run prints it), and --help is
// printed by parse, to stdout.
func newFlags(v verb) *flag.FlagSet {
	fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse reads args into fs and returns the positional arguments. Flags
// may come before, between or after positional arguments (`keys revoke
// KEY --data DIR`); "--" ends the flags. -h, -help or --help prints v's
// usage and flags to stdout and returns flag.ErrHelp, which Run answers
// with exit status 0.
func parse(fs *flag.FlagSet, v verb, args []string, stdout io.Writer) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(fs, v, stdout)
				return nil, err
			}
			return nil, engram.Errorf(engram.EINVALID, "%s: %v (see engram %s --help)", v.name, err, v.name)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// printUsage writes v's synopsis, summary and flags.
func printUsage(fs *flag.FlagSet, v verb, w io.Writer) {
	synopsis := "engram " + v.name
	if v.args != "" {
		synopsis += " " + v.args
	}
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		synopsis += " [flags]"
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", synopsis, v.summary)
	if hasFlags {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// noArgs refuses positional arguments a verb does not take.
func noArgs(v verb, args []string) error {
	if len(args) > 0 {
		return engram.Errorf(engram.EINVALID, "%s: unexpected argument %q (see engram %s --help)", v.name, args[0], v.name)
	}
	return nil
}

// group is a verb with sub-verbs (keys, export, mirror, bench).
type group struct {
	name string
	subs []verb
}

// dispatch picks the sub-verb of args[0]. No sub-verb, or -h, --help or
// help, prints the group's sub-verbs: to stdout with flag.ErrHelp when
// asked for, else as the error.
func (g group) dispatch(args []string, stdout io.Writer) (verb, error) {
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help", "help":
			fmt.Fprint(stdout, g.usage())
			return verb{}, flag.ErrHelp
		}
		for _, v := range g.subs {
			if v.name == g.name+" "+args[0] {
				return v, nil
			}
		}
		return verb{}, engram.Errorf(engram.EINVALID, "%s: unknown verb %q\n%s", g.name, args[0], g.usage())
	}
	return verb{}, engram.Errorf(engram.EINVALID, "%s: want a verb\n%s", g.name, g.usage())
}

func (g group) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: engram %s VERB [flags]   (engram %s VERB --help lists its flags)\n\n", g.name, g.name)
	width := 0
	for _, v := range g.subs {
		width = max(width, len(v.name)+len(v.args)+1)
	}
	for _, v := range g.subs {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, strings.TrimSpace(v.name+" "+v.args), firstLine(v.summary))
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// openExisting opens the store cfg names, refusing to create a SQLite
// database: a verb that reads or changes what is there (keys list,
// export, reflect, sleep, mirror) must not leave an empty engram.db
// behind because --data was mistyped or forgotten.
func openExisting(ctx context.Context, cfg configs.Config, logger *slog.Logger) (*store.DB, error) {
	if cfg.Store.Driver == "" || cfg.Store.Driver == "sqlite" {
		path := cfg.Store.DSN
		if path == "" {
			path = filepath.Join(cfg.DataDir, "engram.db")
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, engram.Errorf(engram.ENOTFOUND, "no database at %s: name the data directory of engram serve with --data DIR (or ENGRAM_DATA_DIR)", path)
		}
	}
	return Open(ctx, cfg, logger)
}

// buildVersion describes the binary from its build information: the
// module version (a tag, or (devel) for a build from a checkout), the
// VCS revision and its time, and whether the work tree had changes.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "engram (no build information)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	out := "engram " + info.Main.Version
	if rev := settings["vcs.revision"]; rev != "" {
		out += "\nrevision " + rev
		if settings["vcs.modified"] == "true" {
			out += " (modified)"
		}
	}
	if t := settings["vcs.time"]; t != "" {
		out += "\ncommitted " + t
	}
	out += "\n" + info.GoVersion + " " + settings["GOOS"] + "/" + settings["GOARCH"]
	if tags := settings["-tags"]; tags != "" {
		out += " tags " + tags
	}
	return out
}

// moduleVersion is the module version alone (for MCP's server info).
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// optString is a string flag that tells "not given" (value nil) from
// "given empty": `--user ""` names the shared data, no --user every user's.
type optString struct{ s *string }

func (o *optString) String() string {
	if o == nil || o.s == nil {
		return ""
	}
	return *o.s
}

func (o *optString) Set(v string) error {
	o.s = &v
	return nil
}

// value is the flag's value, nil when it was not given.
func (o *optString) value() *string { return o.s }

// optionalString defines an optString flag on fs.
func optionalString(fs *flag.FlagSet, name, usage string) *optString {
	o := &optString{}
	fs.Var(o, name, usage)
	return o
}
