// Package journal is engram's file mirror (DESIGN §6): every tenant's
// memories as plain files, for agents that search with ls, grep and jq.
//
//	<dir>/<tenant>/log.jsonl          one Envelope per write, oldest first
//	<dir>/<tenant>/index/<key>.json   the envelope of every live key
//	<dir>/<tenant>/memories/<category>/<id>.json   live memories without a key
//	<dir>/<tenant>/state.jsonl        every live envelope when log.jsonl was last archived
//	<dir>/<tenant>/archive/log-<first seq>-<last seq>.jsonl   archived logs
//	<dir>/<tenant>/NOTICE.txt         why index/ and memories/ are missing, past the budget
//
// The mirror follows the store's change feed (engram.ChangeFeed) through
// the kit's follower (internal/feed), with a cursor in the store like
// every feed consumer, so whatever wrote a memory — the API, MCP, the
// sleep cycle, another server on the database — reaches it, and it
// resumes where it stopped after a restart. The store stays the source
// of truth: the files are a copy that Rebuild recreates from the store's
// event log exactly as following the feed built them.
//
// The mirror cannot hurt the store: it writes only while
// Config.MinFreeBytes stay free on its disk, backs off after a failure,
// and keeps a tenant past Config.MaxFiles in log.jsonl only.
package journal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram"
	"github.com/engram-memory/engram/internal/feed"
)

// Consumer names the mirror's cursor in the change feed.
const Consumer = "mirror"

// page is how many changes one read of the feed takes, and stepBudget how
// long one step keeps a tenant before others get their turn.
const (
	page       = 512
	stepBudget = 2 * time.Second
)

// Tenants lists the tenants, whose names name the mirror's directories.
type Tenants interface {
	FindTenants(ctx context.Context) ([]*engram.Tenant, error)
}

// Config places and bounds the mirror.
type Config struct {
	// Dir holds one directory per tenant, named after the tenant.
	Dir string
	// MaxLogBytes archives log.jsonl before a line would take it past this.
	MaxLogBytes int64
	// MaxFiles, when positive, is each tenant's budget of index/ and
	// memories/ files: a tenant with more live memories is mirrored in
	// log.jsonl and archive/ only (NOTICE.txt says so).
	MaxFiles int64
	// MinFreeBytes, when positive, is kept free on the mirror's file
	// system: a write that would take the free space below it waits.
	MinFreeBytes int64
}

// Mirror keeps the file mirror of every tenant in step with the store.
type Mirror struct {
	feed     engram.ChangeFeed
	tenants  Tenants
	cfg      Config
	log      *slog.Logger
	follower *feed.Follower
	vol      volume

	mu    sync.Mutex
	names map[string]string // tenant id → name
	over  map[string]bool   // tenant name → past MaxFiles, as last followed
}

// New returns the mirror of cfg.Dir; holder names this process in the
// feed leases it takes (unique per server).
func New(changes engram.ChangeFeed, cursors engram.FeedCursors, tenants Tenants, cfg Config, holder string, log *slog.Logger) *Mirror {
	m := &Mirror{feed: changes, tenants: tenants, cfg: cfg, log: log, vol: osVolume{},
		names: map[string]string{}, over: map[string]bool{}}
	m.follower = feed.New(feed.Config{Consumer: Consumer, Holder: holder, Cursors: cursors, Apply: m.follow, Log: log})
	return m
}

// Run follows the feed until ctx ends, looking for work every poll when
// there is none and backing off after failures (internal/feed).
func (m *Mirror) Run(ctx context.Context, poll time.Duration) { m.follower.Run(ctx, poll) }

// Step claims one tenant with changes the mirror has not applied, applies
// them (for at most stepBudget), and advances the tenant's cursor. It
// reports whether it found work.
func (m *Mirror) Step(ctx context.Context) (bool, error) { return m.follower.Step(ctx) }

// Sync applies every change not yet mirrored, tenant by tenant, and
// returns when none is left (or another process holds what is left).
func (m *Mirror) Sync(ctx context.Context) error {
	for {
		worked, err := m.Step(ctx)
		if err != nil || !worked {
			return err
		}
	}
}

// Status is how the mirror is doing, for /healthz and the metrics: the
// follower's state, lag and errors (a full disk shows as backing_off with
// its cause), and how many tenants are past mirror.max_files (not which:
// /healthz needs no key; the log and each tenant's NOTICE.txt name them).
type Status struct {
	feed.Status
	OverBudget int `json:"over_budget"`
}

// Status returns the mirror's status.
func (m *Mirror) Status() Status {
	st := Status{Status: m.follower.Status()}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, over := range m.over {
		if over {
			st.OverBudget++
		}
	}
	return st
}

// follow applies the changes of the tenant in ctx after the position its
// files record (which may lag the store's cursor when the directory was
// removed or restored: the files, not the cursor, say what they hold) and
// returns the position reached (feed.ApplyFunc).
func (m *Mirror) follow(ctx context.Context, tenantID string, after int64) (int64, error) {
	if err := m.room(0); err != nil {
		return after, err
	}
	name, err := m.name(ctx, tenantID)
	if err != nil {
		return after, err
	}
	root, unlock, err := m.lock(ctx, name)
	if err != nil {
		return after, err
	}
	defer root.Close()
	defer unlock()
	t, err := m.openTree(root, name, name, m.cfg.MaxFiles)
	if err != nil {
		return after, err
	}
	if t.position < after {
		m.log.Info("file mirror: catching up with the store", "tenant", name, "from", t.position, "to", after)
	}
	wasOver := t.logOnly
	until := time.Now().Add(stepBudget)
	pos, err := t.replay(ctx, m.feed, func() bool { return time.Now().Before(until) })
	if t.logOnly && !wasOver {
		m.log.Warn("file mirror: tenant past mirror.max_files; index/ and memories/ removed, log.jsonl goes on",
			"tenant", name, "live", t.live, "max_files", m.cfg.MaxFiles)
	}
	m.mu.Lock()
	m.over[name] = t.logOnly
	m.mu.Unlock()
	return pos, errors.Join(err, t.close())
}

// openTree opens the tree of tenant at dir of root with the mirror's
// limits; maxFiles 0 sets no budget.
func (m *Mirror) openTree(root *os.Root, dir, tenant string, maxFiles int64) (*tree, error) {
	t, err := openTree(root, dir, m.cfg.MaxLogBytes)
	if err != nil {
		return nil, err
	}
	t.maxFiles, t.guard, t.notice = maxFiles, m.guard, budgetNotice(tenant, m.cfg.MaxFiles)
	return t, nil
}

// replay applies the feed's changes after the tree's position, a page at
// a time while more returns true, recording the position after each page.
func (t *tree) replay(ctx context.Context, feed engram.ChangeFeed, more func() bool) (int64, error) {
	for {
		changes, err := feed.StateChanges(ctx, t.position, page)
		if err != nil {
			return t.position, err
		}
		if len(changes) == 0 {
			return t.position, nil
		}
		for i, c := range changes {
			if err := t.apply(c); err != nil {
				if i > 0 {
					err = errors.Join(err, t.setPosition(changes[i-1].Seq))
				}
				return t.position, err
			}
		}
		if err := t.setPosition(changes[len(changes)-1].Seq); err != nil {
			return t.position, err
		}
		if len(changes) < page || !more() {
			return t.position, nil
		}
	}
}

// overBudget reports whether the tenant in ctx has more live memories
// than mirror.max_files now.
func (m *Mirror) overBudget(ctx context.Context) (bool, error) {
	if m.cfg.MaxFiles <= 0 {
		return false, nil
	}
	var n int64
	if _, err := m.feed.EachLive(ctx, func(mem *engram.Memory) error {
		if filePath(mem) != "" {
			n++
		}
		return nil
	}); err != nil {
		return false, err
	}
	return n > m.cfg.MaxFiles, nil
}

// RebuildResult says what Rebuild wrote.
type RebuildResult struct {
	Tenant    string `json:"tenant"`
	Position  int64  `json:"position"`  // the last change of the feed applied
	Envelopes int    `json:"envelopes"` // lines of log.jsonl and its archives
	Live      int    `json:"live"`      // files in index/ and memories/
	// LogOnly: the tenant is past mirror.max_files and has no files in
	// index/ and memories/ (NOTICE.txt).
	LogOnly bool `json:"log_only,omitempty"`
}

// RebuildAll rebuilds every tenant's mirror, or only the named tenant's,
// calling report after each; it stops at the first error. ENOTFOUND when
// only names no tenant.
func (m *Mirror) RebuildAll(ctx context.Context, only string, report func(*RebuildResult) error) error {
	tenants, err := m.tenants.FindTenants(ctx)
	if err != nil {
		return fmt.Errorf("journal: list tenants: %w", err)
	}
	found := only == ""
	for _, t := range tenants {
		if only != "" && t.Name != only {
			continue
		}
		found = true
		res, err := m.Rebuild(ctx, t)
		if err != nil {
			return fmt.Errorf("journal: rebuild %s: %w", t.Name, err)
		}
		if err := report(res); err != nil {
			return err
		}
	}
	if !found {
		return engram.Errorf(engram.ENOTFOUND, "tenant %q not found", only)
	}
	return nil
}

// Rebuild recreates the tenant's mirror from the store: it replays the
// tenant's whole event log into a new directory, exactly as following the
// feed wrote the old one, then puts it in the old one's place. Followers
// wait for it (the tenant's lock) and continue from its position. A
// tenant past mirror.max_files now is rebuilt log-only; one under it gets
// its index/ and memories/ files, even if following had turned it
// log-only on the way.
func (m *Mirror) Rebuild(ctx context.Context, tenant *engram.Tenant) (*RebuildResult, error) {
	root, unlock, err := m.lock(ctx, tenant.Name)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	defer unlock()
	fresh, old := tenant.Name+".rebuild", tenant.Name+".old"
	for _, dir := range []string{fresh, old} {
		if err := root.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
	}
	tctx := engram.NewContextWithTenant(ctx, tenant.ID)
	over, err := m.overBudget(tctx)
	if err != nil {
		return nil, err
	}
	// No budget while replaying: the tenant is under it now (or the tree
	// is log-only from the start), whatever it was on the way.
	t, err := m.openTree(root, fresh, tenant.Name, 0)
	if err != nil {
		return nil, err
	}
	if over {
		t.logOnly = true
		err = t.writeNotice()
	}
	pos := int64(0)
	if err == nil {
		pos, err = t.replay(tctx, m.feed, func() bool { return true })
	}
	res := &RebuildResult{Tenant: tenant.Name, Position: pos, LogOnly: over}
	if err == nil {
		res.Envelopes, res.Live, err = t.count()
	}
	if err = errors.Join(err, t.close()); err != nil {
		return nil, err
	}
	if err := root.Rename(tenant.Name, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := root.Rename(fresh, tenant.Name); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := root.RemoveAll(old); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	m.mu.Lock()
	m.over[tenant.Name] = over
	m.mu.Unlock()
	return res, nil
}

// count returns the envelopes logged (log.jsonl and archives) and the
// live files.
func (t *tree) count() (envelopes, live int, err error) {
	err = fs.WalkDir(t.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		switch {
		case p == logFile || strings.HasPrefix(p, archiveDir+"/"):
			data, err := t.root.ReadFile(p)
			if err != nil {
				return err
			}
			envelopes += strings.Count(string(data), "\n")
		case strings.HasPrefix(p, "index/") || strings.HasPrefix(p, "memories/"):
			live++
		}
		return nil
	})
	return envelopes, live, err
}

// lock opens the mirror's directory and takes the tenant's lock.
func (m *Mirror) lock(ctx context.Context, name string) (*os.Root, func(), error) {
	if !engram.ValidName(name) {
		return nil, nil, fmt.Errorf("journal: tenant name %q cannot name a directory", name)
	}
	if err := os.MkdirAll(m.cfg.Dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("journal: create %s: %w", m.cfg.Dir, err)
	}
	root, err := os.OpenRoot(m.cfg.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	unlock, err := lockDir(ctx, root, "."+name+".lock")
	if err != nil {
		_ = root.Close()
		return nil, nil, err
	}
	return root, unlock, nil
}

// name returns the name of the tenant with id, reading the tenants again
// when it is not known yet.
func (m *Mirror) name(ctx context.Context, id string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.names[id]; ok {
		return n, nil
	}
	ts, err := m.tenants.FindTenants(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range ts {
		m.names[t.ID] = t.Name
	}
	if n, ok := m.names[id]; ok {
		return n, nil
	}
	return "", fmt.Errorf("journal: no tenant %s", id)
}
