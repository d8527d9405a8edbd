package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/engram-memory/engram"
)

// progressBar shows a long run's progress (engram.ReportProgress) on a
// stream: on a terminal a bar redrawn in place, otherwise a plain line at
// every tenth, so a log or a pipe gets a few lines and no control
// characters.
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	label string
	tenth int // the last tenth printed as a plain line
	drawn bool
}

// newProgressBar draws on f, as a bar when f is a terminal.
func newProgressBar(f *os.File, label string) *progressBar {
	st, err := f.Stat()
	return &progressBar{w: f, tty: err == nil && st.Mode()&os.ModeCharDevice != 0, label: label, tenth: -1}
}

// context returns ctx reporting its progress to the bar.
func (p *progressBar) context(ctx context.Context) context.Context {
	return engram.NewContextWithProgress(ctx, p.report)
}

func (p *progressBar) report(done, total int) {
	if total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		const width = 30
		fill := width * done / total
		fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total)
		p.drawn = true
		return
	}
	if tenth := 10 * done / total; tenth != p.tenth {
		p.tenth = tenth
		fmt.Fprintf(p.w, "%s: %d/%d\n", p.label, done, total)
	}
}

// finish ends the bar's line on a terminal.
func (p *progressBar) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
	p.tenth = -1
}

// runJobs is `engram jobs [ID]`: a tenant's jobs, newest first, or one
// job, as JSON.
func runJobs(ctx context.Context, args, environ []string, stdout io.Writer) error {
	v := verb{name: "jobs", args: "[ID]", summary: "A tenant's jobs (a large tenant's reflect or sleep, run off the request path), newest\nfirst, or the job ID with its progress and outcome (default tenant: auth.default_tenant)."}
	fs := newFlags(v)
	load := commonFlags(fs, false)
	tenant := fs.String("tenant", "", "tenant name (default: auth.default_tenant)")
	status := fs.String("status", "", "only jobs in this status: queued, running, done or failed")
	positional, err := parse(fs, v, args, stdout)
	if err != nil {
		return err
	}
	if len(positional) > 1 {
		return engram.Errorf(engram.EINVALID, "jobs: at most one job id, got %d arguments", len(positional))
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
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if len(positional) == 1 {
		j, err := db.FindJobByID(ctx, positional[0])
		if err != nil {
			return err
		}
		return enc.Encode(j)
	}
	f := engram.JobFilter{Limit: cfg.Limits.MaxListLimit}
	if *status != "" {
		f.Status = status
	}
	page, err := db.FindJobs(ctx, f)
	if err != nil {
		return err
	}
	return enc.Encode(page.Items)
}
